package io.jhca.lab;

import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.WorkCompletion;

/**
 * The measured loops of the bandwidth tests (perftest_resources.c run_iter_bw, run_iter_bw_server): the client
 * keeps up to tx_depth messages in flight on every QP, asks for a completion every cq_mod messages and on the
 * last one, and polls the send CQ in batches of 16 (CTX_POLL_BATCH); the SEND server re-posts a receive for
 * every message consumed. Nothing allocates inside the loops. With -n, {@code warmup} unmeasured messages per QP run
 * first (the peer runs the same count, and the server re-posts their receives): the client sends them in runs of
 * its own loop ({@link #client}) and posts its first measured message only when every warm-up message has
 * completed, so the measurement then starts from an empty pipe as perftest's does, with the JIT's code in place.
 */
final class BandwidthLoops {
    /** perftest_resources.h CTX_POLL_BATCH. */
    static final int POLL_BATCH = 16;
    /** Grace for in-flight work after a -D run ends. */
    static final long DRAIN_NANOS = 2_000_000_000L;

    private BandwidthLoops() {
    }

    /** wr_id of a send: QP index in the high 32 bits, message index of that QP in the low 32. */
    static long wrId(int qp, long k) {
        return ((long) qp << 32) | (k & 0xFFFFFFFFL);
    }

    /** Runs of the loop the warm-up is split into (see {@link #client}). */
    static final int WARMUP_RUNS = 4;

    /**
     * The client of write-bw, read-bw and send-bw. With a warm-up ({@code -n} only) the loop first runs
     * {@value #WARMUP_RUNS} times over the warm-up messages (into samples of their own, thrown away), each run
     * waiting for its last completion; then the client waits for the JIT to go idle ({@link JvmReport#awaitJitIdle})
     * and the measured run starts from an empty pipe. The peer sees the same messages as one warm-up of
     * {@code warmup} per QP. Warming up in whole runs of the same loop is what lets the measured run keep the JIT's
     * code: a run's first post, its samples and its end are branches the JIT compiles away while they have never
     * been taken, and the first time one is taken the compiled loop is thrown away and compiled again; inside
     * the measured window that took the compiler 0.1-1.5 s of one of the two cores. The wait for the JIT also comes
     * after the first run: without it, a write-bw server's wait loop (OobLink.read) first parked during the wait
     * before the measured run, its compiled code was thrown away there, and compiling it again took C2 240 ms of
     * the measured window; the completer's ACK path, queued behind the warm-up's backlog, reached C2 only then too.
     */
    static void client(PerfSide s, int size, BandwidthSamples out, DurationClock clock, long warmup, JvmReport jvm) {
        JvmReport window = null;
        if (clock == null && warmup > 0) {
            long[] runs = warmupRuns(warmup);
            for (int r = 0; r < runs.length; r++) {
                run(s, size, new BandwidthSamples(size, runs[r] * s.qps.length, out.peak(), out.maxPoints()), null,
                        null);
                if (r == 0 && runs.length > 1 && jvm != null) {
                    // a pause like the one before the measured run, early: an in-process server's wait then parks
                    // once inside the warm-up (a branch its compiled loop drops until taken), and the compiler
                    // catches up with the first run's queue, so the next runs' methods reach C2 without a backlog
                    jvm.awaitJitIdle();
                }
            }
            if (jvm != null) {
                jvm.awaitJitIdle(); // what the warm-up queued for the compiler, done before the clock
                window = jvm; // the JVM report's window starts with the measurement too (run opens it)
            }
        }
        run(s, size, out, clock, window);
    }

    /** {@code warmup} messages cut into {@value #WARMUP_RUNS} runs as even as they go (fewer if there are fewer messages). */
    static long[] warmupRuns(long warmup) {
        long[] runs = new long[(int) Math.min(WARMUP_RUNS, Math.max(0, warmup))];
        for (int r = 0; r < runs.length; r++) {
            runs[r] = warmup / runs.length + (r < warmup % runs.length ? 1 : 0);
        }
        return runs;
    }

    /**
     * One run of the client's loop: {@code out.iters} messages (all QPs), or until {@code clock} says so. A
     * {@code window} opens when the loop starts, after its setup (its arrays and completions, 1.4 kB that the
     * measuring thread's count otherwise showed in every run).
     */
    private static void run(PerfSide s, int size, BandwidthSamples out, DurationClock clock, JvmReport window) {
        int n = s.qps.length;
        SendQueue[] sqs = new SendQueue[n];
        for (int i = 0; i < n; i++) {
            sqs[i] = s.qps[i].sendQueue();
        }
        long iters = clock == null ? out.iters / n : Long.MAX_VALUE;
        long tot = clock == null ? out.iters : Long.MAX_VALUE;
        long[] scnt = new long[n];
        long[] ccnt = new long[n];
        WorkCompletion[] wcs = new WorkCompletion[POLL_BATCH];
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
        PerfTest.Verb verb = s.p.test().verb();
        int cqMod = s.cqMod;
        // perftest cycles through the cycle buffer in INC(size, cache line) steps while size <= cycle_buffer / 2
        int step = size > s.cacheLine ? roundUp(size, s.cacheLine) : s.cacheLine;
        int cycleSlots = size <= s.cycleBuffer / 2 ? Math.max(1, s.cycleBuffer / step) : 1;
        int lkey = s.mr.lkey();
        long base = s.mr.address();
        long totscnt = 0;
        long totccnt = 0;
        long sampled = 0;
        long sampleFirst = 0;
        long sampleLast = 0;
        boolean stopping = false;
        long stopAt = 0;
        long lastSignaled = 0;
        long lastProgress = System.nanoTime();
        long idle = 0;
        if (window != null) {
            window.begin();
        }
        while (true) {
            if (clock == null) {
                if (totscnt >= tot && totccnt >= tot) {
                    break;
                }
            } else if (stopping) {
                if (totccnt >= lastSignaled || System.nanoTime() - stopAt > DRAIN_NANOS) {
                    break;
                }
            }
            for (int i = 0; i < n && !stopping; i++) {
                while (scnt[i] < iters && scnt[i] - ccnt[i] + 1 <= s.txDepth) {
                    long k = scnt[i];
                    long now = System.nanoTime();
                    if (clock != null && clock.over(now)) {
                        stopping = true;
                        stopAt = now;
                        break;
                    }
                    if (totscnt == 0) {
                        out.firstPost = now;
                    }
                    if (out.peak()) {
                        out.tposted[(int) totscnt] = now;
                    }
                    boolean signaled = k % cqMod == cqMod - 1 || k == iters - 1;
                    long off = (k % cycleSlots) * step;
                    long local = base + s.sendSlot(i) + off;
                    PerftestDest r = s.remote[i];
                    SendQueue sq = sqs[i];
                    sq.start();
                    sq.wrId(wrId(i, k)).flags(signaled ? SendFlags.SIGNALED : 0);
                    if (verb == PerfTest.Verb.WRITE) {
                        sq.rdmaWrite(r.rkey(), r.vaddr() + off);
                    } else if (verb == PerfTest.Verb.READ) {
                        sq.rdmaRead(r.rkey(), r.vaddr() + off);
                    } else {
                        sq.send();
                        if (s.ahs != null) {
                            sq.udAddr(s.ahs[i], r.qpn(), PerfMcast.DEF_QKEY); // --mcg: to the group, QPN 0xFFFFFF
                        }
                    }
                    if (size <= s.inlineSize) {
                        sq.inlineData(s.buf, s.sendSlot(i) + (int) off, size);
                    } else {
                        sq.sge(lkey, local, size);
                    }
                    if (sq.complete() != 0) {
                        break; // send queue full: reap completions first
                    }
                    if (signaled && clock != null) {
                        lastSignaled = totscnt + 1; // completions are counted per message below
                    }
                    scnt[i]++;
                    totscnt++;
                }
            }
            int ne = s.sendCq.poll(wcs, POLL_BATCH);
            if (ne == 0 && s.sendChannel != null) {
                // run_iter_bw -e: sleep only once every completion of the last event was polled
                s.waiter.awaitEvent(s.sendCq, "a send completion", totccnt + 1);
                continue;
            }
            if (ne == 0) {
                s.ctx.progress();
                Spin.idle(++idle);
                long now = System.nanoTime();
                if (s.p.stallMillis() > 0 && now - lastProgress > s.p.stallMillis() * 1_000_000L) {
                    throw new IllegalStateException("no completion for " + s.p.stallMillis() + " ms (sent " + totscnt
                            + ", completed " + totccnt + "); peer gone? use --stall-timeout to wait longer");
                }
                continue;
            }
            long now = System.nanoTime();
            lastProgress = now;
            idle = 0;
            for (int j = 0; j < ne; j++) {
                WorkCompletion wc = wcs[j];
                LatencyLoops.check(wc, "send", totccnt);
                int qi = (int) (wc.wrId() >>> 32);
                long k = wc.wrId() & 0xFFFFFFFFL;
                // a completion covers its WR and every unsignaled WR posted before it on the same QP
                long done = k + 1 - ccnt[qi];
                ccnt[qi] = k + 1;
                totccnt += done;
                if (clock == null) {
                    out.completed(totccnt, now);
                } else if (clock.sampling(now)) {
                    if (sampleFirst == 0) {
                        sampleFirst = now;
                    } else {
                        sampled += done;
                    }
                    sampleLast = now;
                }
            }
        }
        if (clock != null) {
            out.iters = sampled;
            out.firstPost = sampleFirst;
            out.lastCompletion = sampleLast;
        }
    }

    /**
     * The SEND server: consume messages and re-post their receives until all arrived (run_iter_bw_server). With a
     * warm-up the loop runs as the client's does ({@link #client}): once per warm-up run of the client, then the
     * measured run, so the measured messages meet the JIT's code of this very loop. Run in one pass, the loop's
     * measured branches (the first message's clock, the last one's) were first taken at the first measured message,
     * the compiled loop was thrown away there, and the server ran it interpreted and in C1 code through the
     * measurement (-XX:+PrintCompilation: sendServer's OSR code "made not entrant" 1 ms after the client's start).
     * Each warm-up run also leaves its last message per QP without a re-post, and posts that receive after the run:
     * the measured run stops re-posting for its last rx_depth messages, and a branch first taken there threw the
     * compiled loop away half-way through the measurement (-XX:+LogCompilation: an unstable_if trap at the
     * re-post's test).
     */
    static void sendServer(PerfSide s, int size, BandwidthSamples out, RecvWr[] rwrs, DurationClock clock,
                           long warmup, JvmReport jvm) {
        int n = s.qps.length;
        // receives posted per QP so far
        long[] posted = new long[n];
        for (int i = 0; i < n; i++) {
            posted[i] = s.recvPerQp();
        }
        long[] cap = new long[n];
        JvmReport window = null;
        if (clock == null && warmup > 0) {
            for (long run : warmupRuns(warmup)) {
                for (int i = 0; i < n; i++) {
                    cap[i] = posted[i] + run - 1; // re-posts all but the run's last receive per QP ...
                }
                serverRun(s, new BandwidthSamples(size, run * n, false, 0), rwrs, null, posted, cap, null);
                for (int i = 0; i < n; i++) {
                    LatencyLoops.repostRecv(s, s.qps[i], rwrs[i], -1); // ... and posts that one now
                    posted[i]++;
                }
            }
            window = jvm; // the JVM report's window starts with the measured run (serverRun opens it)
        }
        // one receive per message a QP is sent, warm-up included (run_iter_bw_server)
        java.util.Arrays.fill(cap, clock == null ? out.iters / n + warmup : Long.MAX_VALUE);
        serverRun(s, out, rwrs, clock, posted, cap, window);
    }

    /**
     * One run of the SEND server's loop: {@code out.iters} messages (all QPs), or until {@code clock} says so; a
     * consumed receive is posted again while its QP has posted fewer than {@code cap[qp]}.
     */
    private static void serverRun(PerfSide s, BandwidthSamples out, RecvWr[] rwrs, DurationClock clock, long[] posted,
                                  long[] cap, JvmReport window) {
        long tot = clock == null ? out.iters : Long.MAX_VALUE;
        WorkCompletion[] wcs = new WorkCompletion[POLL_BATCH];
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
        long rcnt = 0;
        long sampled = 0;
        long first = 0;
        long lastRx = 0;
        long lastProgress = System.nanoTime();
        long idle = 0;
        long endAt = clock == null ? 0 : clock.end() + DRAIN_NANOS;
        if (window != null) {
            window.begin(); // after the setup above, as the client's
        }
        while (rcnt < tot) {
            // never past this run's last message: the client may already be sending the next run's
            int ne = s.recvCq.poll(wcs, (int) Math.min(POLL_BATCH, tot - rcnt));
            if (ne == 0 && s.recvChannel != null) {
                s.waiter.awaitEvent(s.recvCq, "a message from the peer", rcnt + 1); // run_iter_bw_server -e
                continue;
            }
            long now = System.nanoTime();
            if (ne == 0) {
                s.ctx.progress();
                Spin.idle(++idle);
                if (clock != null && now - endAt > 0) {
                    break;
                }
                if (clock == null && s.p.stallMillis() > 0 && now - lastProgress > s.p.stallMillis() * 1_000_000L) {
                    throw new IllegalStateException("no message for " + s.p.stallMillis() + " ms (received " + rcnt
                            + " of " + tot + "); peer gone? use --stall-timeout to wait longer");
                }
                continue;
            }
            lastProgress = now;
            idle = 0;
            for (int j = 0; j < ne; j++) {
                WorkCompletion wc = wcs[j];
                LatencyLoops.check(wc, "receive", rcnt);
                if (first == 0 && (clock == null || clock.sampling(now))) {
                    first = now; // set_on_first_rx_packet: the clock starts at the first message
                } else if (clock != null && clock.sampling(now)) {
                    sampled++;
                }
                if (clock == null || clock.sampling(now)) {
                    lastRx = now;
                }
                rcnt++;
                int qi = (int) wc.wrId();
                if (posted[qi] < cap[qi]) {
                    LatencyLoops.repostRecv(s, s.qps[qi], rwrs[qi], rcnt);
                    posted[qi]++;
                }
            }
        }
        out.firstPost = first;
        out.lastCompletion = lastRx;
        if (clock != null) {
            out.iters = sampled;
        }
    }

    static int roundUp(int v, int a) {
        return v % a == 0 ? v : a * (v / a + 1);
    }
}
