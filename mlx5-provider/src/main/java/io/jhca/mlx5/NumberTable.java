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
}
