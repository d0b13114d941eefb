package io.jhca.mlx5.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jhca.doorbell.DoorbellRecord;
import io.jhca.mlx5.wqe.RecvWqeLayout;
import io.jhca.mlx5.wqe.SrqNextSeg;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * {@link SrqBuffer}'s free WQEs: a completion only marks its WQE free; a post that finds the list used up links the
 * WQE after the tail, else the nearest run of free WQEs (rdma-core srq.c). Checked against what the device does with
 * the ring (it starts at WQE 0 and, having fetched a WQE, goes on to the one its next_wqe_index names, up to the
 * doorbell record's count), over random interleavings of posts, fetches and out-of-order completions.
 */
class SrqBufferTest {

    private static final int SHIFT = 5;   // 32-byte WQEs: the next segment and one data segment

    @Test
    void completedWqesComeBackInIndexOrderNotCompletionOrder() {
        UnsafeBuffer ring = new UnsafeBuffer(new byte[8 << SHIFT]);
        DoorbellRecord dbr = new DoorbellRecord().wrap(new UnsafeBuffer(java.nio.ByteBuffer.allocateDirect(8)), 0);
        SrqBuffer srq = new SrqBuffer(ring, 8, SHIFT, dbr);
        assertEquals(7, srq.maxPost(), "one WQE is the list's tail");
        // rdma-core mlx5_alloc_srq_buf: WQE i links to i + 1; the head is 0, the tail 7
        for (int i = 0; i < 7; i++) {
            assertEquals(i + 1, SrqNextSeg.next(ring, i << SHIFT), "initial link of WQE " + i);
        }
        for (int i = 0; i < 7; i++) {
            assertFalse(full(srq), "WR " + i + " fits");
            postOne(srq, 100 + i, 1, 0x1000L * i, 64);
        }
        assertTrue(full(srq), "7 posted: full");
        ringDoorbell(srq);
        assertEquals(7, dbr.recvCounter(), "doorbell record word 0 = the post counter");
        // the device completes 3, then 1: both only marked free, nothing written into the ring
        byte[] before = ring.byteArray().clone();
        assertEquals(103L, srq.complete(3));
        assertEquals(101L, srq.complete(1));
        assertEquals(true, java.util.Arrays.equals(before, ring.byteArray()), "a completion writes no WQE");
        // the next posts fill 7 (the old tail), then 1, the free WQE nearest after the new tail's search start (0
        // is not free), not 3, the first completed; 3 is the tail then, so the SRQ is full
        assertFalse(full(srq));
        assertEquals(1, SrqNextSeg.next(ring, 7 << SHIFT), "the tail links to the free WQE of the lowest index");
        postOne(srq, 207, 1, 0x7000, 64);
        assertEquals(0x7000, addrOf(ring, 7), "posted into WQE 7");
        assertFalse(full(srq));
        assertEquals(3, SrqNextSeg.next(ring, 1 << SHIFT), "then to the next free one");
        postOne(srq, 201, 1, 0x1001, 64);
        assertEquals(0x1001, addrOf(ring, 1), "posted into WQE 1");
        assertTrue(full(srq), "WQE 3 is the tail now: full again");
        ringDoorbell(srq);
        assertEquals(9, dbr.recvCounter());
        assertEquals(207L, srq.complete(7));
        assertEquals(201L, srq.complete(1));
    }

    @Test
    void aRunOfFreeWqesIsLinkedInIndexOrder() {
        UnsafeBuffer ring = new UnsafeBuffer(new byte[16 << SHIFT]);
        DoorbellRecord dbr = new DoorbellRecord().wrap(new UnsafeBuffer(java.nio.ByteBuffer.allocateDirect(8)), 0);
        SrqBuffer srq = new SrqBuffer(ring, 16, SHIFT, dbr);
        for (int i = 0; i < 15; i++) {
            postOne(srq, i, 1, i, 64);
        }
        assertTrue(full(srq));
        // 9, 6, 5, 8 complete, out of order. WQE 0 after the tail (15) is not free, and the search from head + 1
        // finds nothing up to the ring's end, so it starts over at 0 and takes the first run: 5..6
        for (int w : new int[] {9, 6, 5, 8}) {
            srq.complete(w);
        }
        assertFalse(full(srq));
        assertEquals(5, SrqNextSeg.next(ring, 15 << SHIFT), "the tail links to the run's first WQE");
        assertEquals(6, SrqNextSeg.next(ring, 5 << SHIFT), "and the run in index order");
        postOne(srq, 100, 1, 100, 64);   // into 15, the old tail
        postOne(srq, 105, 1, 105, 64);   // into 5
        assertEquals(105, addrOf(ring, 5));
        assertFalse(full(srq), "6 is the tail: 8 and 9 follow it");
        assertEquals(8, SrqNextSeg.next(ring, 6 << SHIFT));
        assertEquals(9, SrqNextSeg.next(ring, 8 << SHIFT));
        postOne(srq, 106, 1, 106, 64);
        postOne(srq, 108, 1, 108, 64);
        assertEquals(106, addrOf(ring, 6));
        assertEquals(108, addrOf(ring, 8));
        assertTrue(full(srq), "9 is the tail, nothing else is free");
    }

    /**
     * Random posts (one SGE or several), device fetches and completions in any order. Checks that a post never lands in
     * a WQE the device still holds, that the SRQ is full exactly when max_post WRs are outstanding, that the device
     * walking the links fetches exactly the WRs posted in their order, and that each completion returns its WR's
     * wr_id. Seed: {@code -Djhca.srqbuffer.seed}.
     */
    @Test
    void theDeviceWalkingTheLinksFetchesExactlyWhatWasPosted() {
        long seed = Long.getLong("jhca.srqbuffer.seed", System.nanoTime());
        System.out.println("SrqBufferTest seed " + seed + " (replay: -Djhca.srqbuffer.seed=" + seed + ")");
        Random r = new Random(seed);
        for (int wqeCnt : new int[] {2, 4, 16, 64, 256}) {
            String what = wqeCnt + " WQEs, seed " + seed;
            UnsafeBuffer ring = new UnsafeBuffer(new byte[wqeCnt << SHIFT]);
            DoorbellRecord dbr = new DoorbellRecord().wrap(new UnsafeBuffer(java.nio.ByteBuffer.allocateDirect(8)), 0);
            SrqBuffer srq = new SrqBuffer(ring, wqeCnt, SHIFT, dbr);
            ArrayDeque<Long> postedOrder = new ArrayDeque<>();   // wr_ids posted, not yet fetched by the device
            Map<Integer, Long> held = new HashMap<>();           // WQEs the device fetched and has not completed
            int outstanding = 0;
            int deviceHead = 0;
            int fetched = 0;
            long nextWrId = 1;
            for (int step = 0; step < 4000; step++) {
                int action = r.nextInt(3);
                if (action == 0) {   // post a chain
                    int n = 1 + r.nextInt(Math.max(1, wqeCnt / 2));
                    for (int k = 0; k < n; k++) {
                        boolean full = full(srq);
                        assertEquals(outstanding == srq.maxPost(), full,
                                "full() with " + outstanding + " of " + srq.maxPost() + " outstanding, " + what);
                        if (full) {
                            break;
                        }
                        long id = nextWrId++;
                        if (r.nextBoolean()) {
                            postOne(srq, id, 7, id, 64);
                        } else {   // the segment path, its one SGE carrying the wr_id as its address
                            srq.lock();
                            try {
                                srq.begin(id);
                                srq.sge(7, id, 64);
                                srq.finish();
                            } finally {
                                srq.unlock();
                            }
                        }
                        postedOrder.add(id);
                        outstanding++;
                    }
                    ringDoorbell(srq);
                } else if (action == 1) {   // the device fetches some of what the doorbell record counts
                    int available = (dbr.recvCounter() - fetched) & 0xffff;
                    int n = available == 0 ? 0 : 1 + r.nextInt(available);
                    for (int k = 0; k < n; k++) {
                        long id = addrOf(ring, deviceHead);
                        assertEquals(postedOrder.poll(), Long.valueOf(id),
                                "the device's fetch " + fetched + " at WQE " + deviceHead + ", " + what);
                        assertEquals(null, held.put(deviceHead, id), "WQE " + deviceHead + " fetched twice, " + what);
                        deviceHead = SrqNextSeg.next(ring, deviceHead << SHIFT);
                        fetched++;
                    }
                } else if (!held.isEmpty()) {   // the device completes some of what it holds, in any order
                    List<Integer> wqes = new ArrayList<>(held.keySet());
                    Collections.shuffle(wqes, r);
                    for (int w : wqes.subList(0, 1 + r.nextInt(wqes.size()))) {
                        assertEquals(held.remove(w).longValue(), srq.complete(w), "wr_id of WQE " + w + ", " + what);
                        outstanding--;
                    }
                }
                assertEquals(outstanding, srq.posted(), what);
            }
        }
    }

    /**
     * A poster thread and a device-and-completer thread on one ring, the way an application's posting thread and its
     * CQ's polling thread share an SRQ: every WR reaches the device once and in order, and every WQE comes back.
     * Lost updates under the lock (a free bit, the head, the post count) would hang the poster or misorder the walk.
     */
    @Test
    void aPosterAndACompleterOnTwoThreadsLoseNothing() throws Exception {
        final int wqeCnt = 64;
        final long wrs = 200_000;
        UnsafeBuffer ring = new UnsafeBuffer(java.nio.ByteBuffer.allocateDirect(wqeCnt << SHIFT));
        UnsafeBuffer dbrMem = new UnsafeBuffer(java.nio.ByteBuffer.allocateDirect(8));
        SrqBuffer srq = new SrqBuffer(ring, wqeCnt, SHIFT, new DoorbellRecord().wrap(dbrMem, 0));
        Thread poster = new Thread(() -> {
            long id = 1;
            while (id <= wrs) {
                srq.lock();
                try {
                    while (id <= wrs && !srq.full()) {
                        srq.postOne(id, 7, id, 64);
                        id++;
                    }
                    srq.ringDoorbell();
                } finally {
                    srq.unlock();
                }
                Thread.onSpinWait();
            }
        }, "srq-poster");
        poster.setDaemon(true);
        poster.start();
        int deviceHead = 0;
        int fetched = 0;
        int[] held = new int[8];
        int nHeld = 0;
        for (long expect = 1; expect <= wrs; ) {
            int counter = Integer.reverseBytes(dbrMem.getIntVolatile(0)) & 0xffff;   // the record is big-endian
            int available = (counter - fetched) & 0xffff;
            for (int k = 0; k < available && expect <= wrs; k++) {
                assertEquals(expect, addrOf(ring, deviceHead), "fetch " + fetched + " at WQE " + deviceHead);
                held[nHeld++] = deviceHead;
                deviceHead = SrqNextSeg.next(ring, deviceHead << SHIFT);
                fetched++;
                expect++;
                if (nHeld == held.length) {   // complete the held ones newest first: out of order
                    for (int h = nHeld - 1; h >= 0; h--) {
                        srq.complete(held[h]);
                    }
                    nHeld = 0;
                }
            }
            if (available == 0 && nHeld > 0) {   // nothing new: give back what is held, so the poster can go on
                for (int h = nHeld - 1; h >= 0; h--) {
                    srq.complete(held[h]);
                }
                nHeld = 0;
            }
        }
        poster.join(30_000);
        assertFalse(poster.isAlive(), "the poster finished");
        for (int h = nHeld - 1; h >= 0; h--) {
            srq.complete(held[h]);
        }
        assertEquals(0, srq.posted(), "every WR completed");
    }

    // the posting methods under the ring's lock, as a poster calls them; complete() takes it itself

    private static boolean full(SrqBuffer srq) {
        srq.lock();
        try {
            return srq.full();
        } finally {
            srq.unlock();
        }
    }

    private static void postOne(SrqBuffer srq, long wrId, int lkey, long addr, int length) {
        srq.lock();
        try {
            srq.postOne(wrId, lkey, addr, length);
        } finally {
            srq.unlock();
        }
    }

    private static void ringDoorbell(SrqBuffer srq) {
        srq.lock();
        try {
            srq.ringDoorbell();
        } finally {
            srq.unlock();
        }
    }

    /** The address of the WQE's first data segment: the tests post each WR with its wr_id there. */
    private static long addrOf(UnsafeBuffer ring, int wqe) {
        int seg = (wqe << SHIFT) + SrqNextSeg.SIZE;
        assertTrue(ring.getInt(seg + 4, ByteOrder.BIG_ENDIAN) != RecvWqeLayout.INVALID_LKEY, "WQE " + wqe + " holds an SGE");
        return ring.getLong(seg + 8, ByteOrder.BIG_ENDIAN);
    }
}
