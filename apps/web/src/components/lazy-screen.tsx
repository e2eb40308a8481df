import { Component, ComponentType, lazy, LazyExoticComponent, ReactNode, Suspense } from 'react';
import { ErrorBox, Loading } from '../ui';

/**
 * A component of a module fetched the first time it is drawn, so that a screen's code, and the libraries only it
 * uses (CodeMirror, the charts, drag and drop), stay out of every other screen's load.
 */
export function lazyScreen<M extends Record<K, ComponentType<any>>, K extends keyof M & string>(load: () => Promise<M>, name: K): LazyExoticComponent<M[K]> {
  return lazy(() => load().then((module) => ({ default: module[name] })));
}

/**
 * Where a lazy screen is drawn: the shared loading line while its file is fetched, and the error, with a reload,
 * when it cannot be (the connection dropped, or a newer build replaced the file since the page was loaded). Keyed by
 * the screen it holds (`screenKey`), so that another screen starts in a slot of its own.
 */
export function ScreenSlot({ children }: { children: ReactNode }) {
  return (
    <ScreenBoundary>
      <Suspense fallback={<Loading />}>{children}</Suspense>
    </ScreenBoundary>
  );
}

class ScreenBoundary extends Component<{ children: ReactNode }, { error: unknown }> {
  state = { error: null as unknown };

  static getDerivedStateFromError(error: unknown) {
    return { error };
  }

  render() {
    // A reload fetches the page again, and with it the names of the files the current build holds.
    if (this.state.error !== null) return <ErrorBox error={this.state.error} onRetry={() => location.reload()} />;
    return this.props.children;
  }
}
