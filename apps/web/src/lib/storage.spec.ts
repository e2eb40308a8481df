import { guardedStorage, KeyValueStore } from './storage';

function mapStore(): KeyValueStore & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return { map, getItem: (key) => map.get(key) ?? null, setItem: (key, value) => void map.set(key, value), removeItem: (key) => void map.delete(key) };
}

describe('guardedStorage', () => {
  it('uses the browser’s storage while it answers', () => {
    const backing = mapStore();
    const store = guardedStorage(() => backing);
    store.setItem('a', '1');
    expect(backing.map.get('a')).toBe('1');
    expect(store.getItem('a')).toBe('1');
    store.removeItem('a');
    expect(backing.map.has('a')).toBe(false);
    expect(store.getItem('a')).toBeNull();
  });

  it('keeps values in memory when the browser refuses its storage (a third-party frame)', () => {
    let opened = 0;
    const store = guardedStorage(() => {
      opened++;
      throw new Error("Failed to read the 'localStorage' property from 'Window': Access is denied for this document.");
    });
    expect(store.getItem('a')).toBeNull();
    store.setItem('a', '1');
    expect(store.getItem('a')).toBe('1');
    store.removeItem('a');
    expect(store.getItem('a')).toBeNull();
    // Refused once, not asked again.
    expect(opened).toBe(1);
  });
});
