package io.jhca.verbs;

/** The scatter/gather list of a send or receive WR: preallocated elements, a count in use, their total length. */
final class Sges {

    private Sges() {
    }

    /** {@code max} reusable elements. */
    static Sge[] preallocate(int max) {
        Sge[] list = new Sge[max];
        for (int i = 0; i < max; i++) {
            list[i] = new Sge();
        }
        return list;
    }

    /** {@code n}, checked against the elements there are. */
    static int count(int n, Sge[] list) {
        if (n < 0 || n > list.length) {
            throw new IllegalArgumentException("numSge " + n + " out of 0.." + list.length);
        }
        return n;
    }

    /** The sum of the first {@code n} lengths, each unsigned ({@code struct ibv_sge}); posts refuse past 2^31-1. */
    static long totalLength(Sge[] list, int n) {
        if (n == 1) {
            return list[0].length() & 0xFFFFFFFFL;   // the common WR: no loop (C2 strip-mines even a 1-trip one)
        }
        long sum = 0;
        for (int i = 0; i < n; i++) {
            sum += list[i].length() & 0xFFFFFFFFL;
        }
        return sum;
    }
}
