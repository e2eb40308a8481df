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
 * when it cannot be (the connection dropped, or a newer build replaced the file since the page was loaded). `place`
 * names what is shown; when it changes, an error shown for the previous place is dropped.
 */
export function ScreenSlot({ place, children }: { place: string; children: ReactNode }) {
  return (
    <ScreenBoundary place={place}>
      <Suspense fallback={<Loading />}>{children}</Suspense>
    </ScreenBoundary>
  );
}

class ScreenBoundary extends Component<{ place: string; children: ReactNode }, { error: unknown; place: string | null }> {
  state = { error: null as unknown, place: null as string | null };

  static getDerivedStateFromError(error: unknown) {
    return { error };
  }

  static getDerivedStateFromProps(props: { place: string }, state: { error: unknown; place: string | null }) {
    return state.place === props.place ? null : { error: null, place: props.place };
  }

  render() {
    // A reload fetches the page again, and with it the names of the files the current build holds.
    if (this.state.error !== null) return <ErrorBox error={this.state.error} onRetry={() => location.reload()} />;
    return this.props.children;
  }
}
