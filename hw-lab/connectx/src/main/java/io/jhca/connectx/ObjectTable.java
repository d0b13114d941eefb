package io.jhca.connectx;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Firmware object numbers (PD, mkey index, CQN, EQN, UAR index): the lowest free number from {@code first} up to
 * {@code max}, and a lookup that never allocates. Firmware thread only.
 */
final class ObjectTable<T> {

    private final int first;
    private final int max;
    private Object[] slots = new Object[16];
    private int count;

    /** Numbers {@code first..max} inclusive. */
    ObjectTable(int first, int max) {
        this.first = first;
        this.max = max;
    }

    /** The lowest free number, or -1 when all are taken. */
    int nextFree() {
        for (int n = first; n <= max; n++) {
            if (n >= slots.length || slots[n] == null) {
                return n;
            }
        }
        return -1;
    }

    void put(int n, T obj) {
        if (n < first || n > max) {
            throw new IllegalArgumentException("number " + n + " outside " + first + ".." + max);
        }
        if (n >= slots.length) {
            slots = Arrays.copyOf(slots, Math.max(n + 1, slots.length * 2));
        }
        if (slots[n] != null) {
            throw new IllegalStateException("number " + n + " is taken");
        }
        slots[n] = obj;
        count++;
    }

    @SuppressWarnings("unchecked")
    T get(int n) {
        return n >= 0 && n < slots.length ? (T) slots[n] : null;
    }

    @SuppressWarnings("unchecked")
    T remove(int n) {
        T t = get(n);
        if (t != null) {
            slots[n] = null;
            count--;
        }
        return t;
    }

    int size() {
        return count;
    }

    /** The live objects, lowest number first (a copy). */
    @SuppressWarnings("unchecked")
    List<T> values() {
        List<T> out = new ArrayList<>(count);
        for (Object o : slots) {
            if (o != null) {
                out.add((T) o);
            }
        }
        return out;
    }
}
