package io.jhca.lab;

import java.io.IOException;

/**
 * What one hwlab side of a two-process run offers the other, carried in perftest's version exchange: a warm-up, so
 * that two hwlab sides warm up as an in-process run does without an option, and the end of the UDP floors, so that
 * the client measures them between the two sides' addresses wherever the two run ({@link RemoteFloors}). Against C
 * perftest nothing changes.
 *
 * <p>perftest sends its version as {@code char version[16]} filled by {@code strncpy} (NULs after the string) and
 * reads the peer's only with {@code atof} (perftest_communication.c {@code exchange_versions},
 * {@code check_version_compatibility}): bytes after the string's NUL are never read by C perftest. hwlab puts there
 * the tag {@code "jhca"}, then the warm-up iterations it offers (big-endian int), then a flag byte saying whether
 * {@code --warmup} gave them and whether this side serves UDP floors. A C peer's NULs carry no tag, and the run then
 * warms up only if {@code --warmup} was given (the user's word that the peer runs the same count). An hwlab from
 * before the floors' flag sends it clear, and ignores it.
 *
 * @param iters  the warm-up iterations this side offers ({@code --warmup}, else the in-process default)
 * @param given  whether {@code --warmup} gave them
 * @param floors whether this side answers the UDP floors' requests after the test ({@link RemoteFloors})
 */
record PeerOffer(int iters, boolean given, boolean floors) {
    private static final byte[] TAG = {'j', 'h', 'c', 'a'};
    private static final int GIVEN = 1;
    private static final int FLOORS = 2;
    /** Tag, iterations, flags. */
    private static final int LENGTH = TAG.length + 4 + 1;

    /** Writes the offer after the NUL of the version string in {@code version} (the 16 bytes sent). */
    void writeInto(byte[] version) {
        int at = afterString(version);
        if (at + LENGTH > version.length) {
            throw new IllegalArgumentException("no room for the warm-up offer after a version of " + (at - 1) + " bytes");
        }
        System.arraycopy(TAG, 0, version, at, TAG.length);
        at += TAG.length;
        for (int shift = 24; shift >= 0; shift -= 8) {
            version[at++] = (byte) (iters >>> shift);
        }
        version[at] = (byte) ((given ? GIVEN : 0) | (floors ? FLOORS : 0));
    }

    /** The offer in the peer's 16 bytes, or null if they carry none (C perftest, or an older hwlab). */
    static PeerOffer readFrom(byte[] theirs) {
        int at = afterString(theirs);
        if (at + LENGTH > theirs.length) {
            return null;
        }
        for (int i = 0; i < TAG.length; i++) {
            if (theirs[at + i] != TAG[i]) {
                return null;
            }
        }
        at += TAG.length;
        int n = 0;
        for (int i = 0; i < 4; i++) {
            n = n << 8 | theirs[at++] & 0xff;
        }
        if (n < 0) {
            return null; // not an offer this code makes: take it as none
        }
        return new PeerOffer(n, (theirs[at] & GIVEN) != 0, (theirs[at] & FLOORS) != 0);
    }

    /**
     * The warm-up both sides run: both compute it from the same two offers, so they agree. A value given on one side
     * wins over the other's default; two given values must be equal; two defaults give the larger. Without the
     * peer's offer, {@code withoutOffer} (the given value, else 0).
     *
     * @throws IOException if both sides gave --warmup and the values differ (both sides fail, naming both)
     */
    static int agree(PeerOffer mine, PeerOffer theirs, int withoutOffer) throws IOException {
        if (theirs == null) {
            return withoutOffer;
        }
        if (mine.given && theirs.given) {
            if (mine.iters != theirs.iters) {
                throw new IOException("--warmup " + mine.iters + " here and " + theirs.iters + " at the peer: both"
                        + " sides must run the same warm-up (give the same value, or give it on one side only)");
            }
            return mine.iters;
        }
        if (mine.given) {
            return mine.iters;
        }
        if (theirs.given) {
            return theirs.iters;
        }
        return Math.max(mine.iters, theirs.iters);
    }

    /** Index after the first NUL (the string's end), or the length if there is none. */
    private static int afterString(byte[] version) {
        for (int i = 0; i < version.length; i++) {
            if (version[i] == 0) {
                return i + 1;
            }
        }
        return version.length;
    }
}
