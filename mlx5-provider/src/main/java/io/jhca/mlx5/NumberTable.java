package io.jhca.mlx5;

import org.agrona.collections.Int2ObjectHashMap;

/**
 * Objects by their device number (QPN, CQN, mkey), read without locks or allocation on the data path: writers (control
 * path, synchronized) publish a fresh copy of the map; readers see one immutable snapshot through a volatile read.
 */
final class NumberTable<T> {

    private volatile Int2ObjectHashMap<T> map = new Int2ObjectHashMap<>();

    T get(int number) {
        return map.get(number);
    }

    synchronized void put(int number, T value) {
        Int2ObjectHashMap<T> m = new Int2ObjectHashMap<>(map);
        m.put(number, value);
        map = m;
    }

    synchronized void remove(int number) {
        Int2ObjectHashMap<T> m = new Int2ObjectHashMap<>(map);
        m.remove(number);
        map = m;
    }

    int size() {
        return map.size();
    }

    /**
     * A copy of the objects, in number order: control path. Under the writers' lock, since the map's iterator is
     * cached in the map and the snapshot is shared.
     */
    synchronized java.util.List<T> values() {
        Int2ObjectHashMap<T> m = map;
        int[] keys = new int[m.size()];
        int n = 0;
        for (Int2ObjectHashMap<T>.KeyIterator it = m.keySet().iterator(); it.hasNext(); ) {
            keys[n++] = it.nextInt();
        }
        java.util.Arrays.sort(keys, 0, n);
        java.util.List<T> out = new java.util.ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(m.get(keys[i]));
        }
        return out;
    }
}
