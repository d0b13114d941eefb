package io.jhca.lab;

import org.agrona.MutableDirectBuffer;

/**
 * The header of a multicast feed message ({@code hwlab mcast}), little-endian: the sequence number (0, 1, ...), the
 * publisher's session (random, so a subscriber tells a restarted publisher from a duplicate) and, on the last
 * message only, the number of messages sent (otherwise -1). The rest of the message is filler.
 */
final class FeedPayload {
    static final int HEADER = 24;
    static final int SEQ = 0;
    static final int SESSION = 8;
    static final int TOTAL = 16;
    static final long NOT_LAST = -1;

    private FeedPayload() {
    }

    static void put(MutableDirectBuffer b, int at, long seq, long session, long total) {
        b.putLong(at + SEQ, seq);
        b.putLong(at + SESSION, session);
        b.putLong(at + TOTAL, total);
    }
}
