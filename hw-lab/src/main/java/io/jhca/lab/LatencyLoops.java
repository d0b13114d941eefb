package io.jhca.lab;

import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The measured loops of the latency tests, step for step as perftest runs them (perftest_resources.c
 * run_iter_lat_write, run_iter_lat_send, run_iter_lat). Nothing in a loop allocates: the send builder writes
 * in place, completions land in one reused {@link WorkCompletion}, times go into a preallocated array (or,
 * with -D, into a pre-sized histogram). With -n, {@code warmup} unmeasured iterations run first in the same
 * loop (the peer runs the same count), so the measured ones find the code compiled and the counters in step.
 */
final class LatencyLoops {
    static {
        // Loaded before any loop runs. Without a -D run nothing loads it, and C2 compiled the loops with a trap that
        // loads it where they use it; a loop that deoptimized in its measured window then read the class from the jar
        // there: 6336 B allocated by the measuring thread in most -n 200000 write-lat runs (-Xlog:class+load).
        DurationClock.class.getName();
    }

    private LatencyLoops() {
    }

    /**
     * ib_write_lat: both sides RDMA-WRITE to each other in turn, and each learns of the peer's write by polling
     * the last byte of its own receive slot, which carries the sender's iteration count. The server posts first.
     */
    static void writeLat(PerfSide s, int size, boolean server, LatencySamples out, DurationClock clock, long warmup,
                         JvmReport jvm) {
        QueuePair qp = s.qps[0];
        SendQueue sq = qp.sendQueue();
        PerftestDest r = s.remote[0];
        UnsafeBuffer buf = s.buf;
        int postIdx = s.sendSlot(0) + size - 1;
        int pollIdx = s.recvSlot(0) + size - 1;
        long laddr = s.mr.address() + s.sendSlot(0);
        int lkey = s.mr.lkey();
        boolean inline = size <= s.inlineSize;
        WorkCompletion wc = new WorkCompletion();
        long scnt = 0;
        long rcnt = 0;
        long ccnt = 0;
        PostStamps stamps = new PostStamps(out, clock, warmup, jvm);
        long iters = stamps.total();
        while (scnt < iters || ccnt < iters || rcnt < iters) {
            if (rcnt < iters && !(scnt < 1 && server)) {
                rcnt++;
                long deadline = clock == null ? Waiter.NO_DEADLINE : clock.end();
                if (!s.waiter.awaitByte(buf, pollIdx, (byte) rcnt, deadline, "the peer's RDMA WRITE", rcnt)) {
                    break;
                }
            }
            if (scnt < iters) {
                gap(s, scnt, warmup);
                if (!stamps.stamp(scnt)) {
                    break;
                }
                long now = stamps.now();
                buf.putByte(postIdx, (byte) ++scnt); // the iteration count rides in the last byte (perftest post_buf)
                for (long tries = 0; ; tries++) {
                    sq.start();
                    sq.wrId(0).flags(SendFlags.SIGNALED).rdmaWrite(r.rkey(), r.vaddr());
                    if (inline) {
                        sq.inlineData(buf, s.sendSlot(0), size);
                    } else {
                        sq.sge(lkey, laddr, size);
                    }
                    if (sq.complete() == 0) {
                        break;
                    }
                    queueFull(s, tries, now);
                }
            }
            if (ccnt < iters) {
                s.waiter.pollOne(s.sendCq, wc, "the completion of RDMA WRITE", ccnt + 1);
                check(wc, "send", ccnt);
                ccnt++;
            }
        }
        stamps.finish();
    }

    /**
     * ib_send_lat: SEND/RECV ping-pong; the client sends first. The receives were posted (rx_depth of them)
     * before the sync handshake; each consumed receive is re-posted while more messages are due.
     */
    static void sendLat(PerfSide s, int size, boolean server, LatencySamples out, DurationClock clock, RecvWr rwr,
                        long warmup, JvmReport jvm) {
        QueuePair qp = s.qps[0];
        SendQueue sq = qp.sendQueue();
        UnsafeBuffer buf = s.buf;
        long laddr = s.mr.address() + s.sendSlot(0);
        int lkey = s.mr.lkey();
        boolean inline = size <= s.inlineSize;
        WorkCompletion wc = new WorkCompletion();
        long scnt = 0;
        long rcnt = 0;
        PostStamps stamps = new PostStamps(out, clock, warmup, jvm);
        long iters = stamps.total();
        while (scnt < iters || rcnt < iters) {
            if (rcnt < iters && !(scnt < 1 && !server)) {
                if (clock == null) {
                    s.waiter.pollOne(s.recvCq, wc, "a message from the peer", rcnt + 1);
                } else if (!pollUntil(s, s.recvCq, wc, clock.end())) {
                    break;
                }
                check(wc, "receive", rcnt);
                rcnt++;
                if (clock != null || rcnt + s.recvPerQp() <= iters) {
                    repostRecv(s, qp, rwr, rcnt);
                }
            }
            if (scnt < iters) {
                gap(s, scnt, warmup);
                if (!stamps.stamp(scnt)) {
                    break;
                }
                long now = stamps.now();
                scnt++;
                for (long tries = 0; ; tries++) {
                    sq.start();
                    sq.wrId(0).flags(SendFlags.SIGNALED).send();
                    if (inline) {
                        sq.inlineData(buf, s.sendSlot(0), size);
                    } else {
                        sq.sge(lkey, laddr, size);
                    }
                    if (sq.complete() == 0) {
                        break;
                    }
                    queueFull(s, tries, now);
                }
                // tx depth is 1 and cq_mod is capped to it: every send is signaled and reaped at once (perftest)
                s.waiter.pollOne(s.sendCq, wc, "the completion of SEND", scnt);
                check(wc, "send", scnt - 1);
            }
        }
        stamps.finish();
    }

    /** ib_read_lat / ib_atomic_lat: the client alone posts one READ (or FETCH_AND_ADD) and waits for it, in turn. */
    static void oneSidedLat(PerfSide s, int size, LatencySamples out, DurationClock clock, long warmup, JvmReport jvm) {
        QueuePair qp = s.qps[0];
        SendQueue sq = qp.sendQueue();
        PerftestDest r = s.remote[0];
        long laddr = s.mr.address() + s.sendSlot(0);
        int lkey = s.mr.lkey();
        boolean atomic = s.p.test().verb() == PerfTest.Verb.ATOMIC;
        WorkCompletion wc = new WorkCompletion();
        PostStamps stamps = new PostStamps(out, clock, warmup, jvm);
        long iters = stamps.total();
        for (long scnt = 0; scnt < iters; scnt++) {
            gap(s, scnt, warmup);
            if (!stamps.stamp(scnt)) {
                break;
            }
            long now = stamps.now();
            for (long tries = 0; ; tries++) {
                sq.start();
                sq.wrId(0).flags(SendFlags.SIGNALED);
                if (atomic) {
                    // perftest_resources.c: FETCH_AND_ADD adds ATOMIC_ADD_VALUE (1)
                    sq.atomicFetchAdd(r.rkey(), r.vaddr(), 1).sge(lkey, laddr, 8);
                } else {
                    sq.rdmaRead(r.rkey(), r.vaddr()).sge(lkey, laddr, size);
                }
                if (sq.complete() == 0) {
                    break;
                }
                queueFull(s, tries, now);
            }
            s.waiter.pollOne(s.sendCq, wc, atomic ? "the completion of FETCH_AND_ADD" : "the completion of RDMA READ", scnt + 1);
            check(wc, "send", scnt);
        }
        stamps.finish();
    }

    /**
     * --latency_gap: waits before a post is timed, as perftest spins there (perftest_resources.c run_iter_lat*),
     * driving the device meanwhile (a software device in caller progress moves nothing otherwise, where perftest's
     * device works on its own) and yielding as the tools' other waits do; how long is {@link #gapBefore}'s.
     */
    static void gap(PerfSide s, long scnt, long warmup) {
        Spin.forNanos(gapBefore(scnt, warmup, s.p.latencyGapNanos()), s.ctx);
    }

    /**
     * What post {@code post} waits before it goes out, for the RDMA loops and the UDP floors alike: {@code gapNanos}
     * from the middle of the warm-up on, 0 before. A wait loop the warm-up never ran is compiled as a trap, which the
     * first measured post would take, deoptimizing the loop while it is timed (see {@link PostStamps#stamp}); the first
     * half of the warm-up goes without, so the warm-up does not take twice its time at large gaps. The phase is masked
     * in, not branched on.
     */
    static long gapBefore(long post, long warmup, long gapNanos) {
        return gapNanos & PostStamps.measured(post, warmup >> 1);
    }

    private static boolean pollUntil(PerfSide s, CompletionQueue cq, WorkCompletion wc, long deadline) {
        long spins = 0;
        while (cq.poll(wc) == 0) {
            s.ctx.progress();
            Spin.idle(++spins);
            if ((spins & 1023) == 0) {
                if (System.nanoTime() - deadline > 0) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * The send queue refused a WR although the previous one's completion was already polled: a provider may
     * free the slot a moment after it publishes the completion (seen with rxe's engine thread). Drive progress
     * and retry; give up with perftest's message after about the stall timeout.
     */
    static void queueFull(PerfSide s, long tries, long since) {
        s.ctx.progress();
        Spin.idle(tries);
        if ((tries & 1023) == 1023 && s.p.stallMillis() > 0
                && System.nanoTime() - since > s.p.stallMillis() * 1_000_000L) {
            throw new IllegalStateException("Couldn't post send: the send queue stayed full for " + s.p.stallMillis() + " ms");
        }
    }

    /** Re-posts a consumed receive; a provider may free the slot a moment after the completion (see queueFull). */
    static void repostRecv(PerfSide s, QueuePair qp, RecvWr rwr, long rcnt) {
        long since = 0;
        for (long tries = 0; s.postRecv(qp, rwr) != 1; tries++) {
            if (tries == 0) {
                since = System.nanoTime();
            }
            s.ctx.progress();
            Spin.idle(tries);
            if ((tries & 1023) == 1023 && s.p.stallMillis() > 0
                    && System.nanoTime() - since > s.p.stallMillis() * 1_000_000L) {
                throw new IllegalStateException("Couldn't post recv: rcnt=" + rcnt + " (the receive queue stayed full)");
            }
        }
    }

    static void check(WorkCompletion wc, String what, long count) {
        if (wc.status() != WcStatus.SUCCESS) {
            throw new IllegalStateException("Completion with error at " + what + " #" + (count + 1) + ": "
                    + wc.status().description() + " (" + wc.status().value() + "), vendor_err 0x"
                    + Integer.toHexString(wc.vendorErr()));
        }
    }
}
