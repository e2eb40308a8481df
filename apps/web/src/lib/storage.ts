/**
 * Web storage that may be refused: a browser blocking third-party storage throws on the first touch of
 * `localStorage` or `sessionStorage` inside a partner's iframe. Then values live in memory for the page's life,
 * which is all an embed needs (its session is the cookie).
 */
export interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export function guardedStorage(open: () => KeyValueStore): KeyValueStore {
  const memory = new Map<string, string>();
  let refused = false;
  const attempt = <T>(work: (store: KeyValueStore) => T, fallback: () => T): T => {
    if (!refused) {
      try {
        return work(open());
      } catch {
        refused = true;
      }
    }
    return fallback();
  };
  return {
    getItem: (key) =>
      attempt(
        (store) => store.getItem(key),
        () => memory.get(key) ?? null,
      ),
    setItem: (key, value) =>
      attempt(
        (store) => store.setItem(key, value),
        () => void memory.set(key, value),
      ),
    removeItem: (key) =>
      attempt(
        (store) => store.removeItem(key),
        () => void memory.delete(key),
      ),
  };
}

export const local = guardedStorage(() => globalThis.localStorage);
export const tabStorage = guardedStorage(() => globalThis.sessionStorage);
