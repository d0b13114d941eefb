package io.jhca.tests.harness;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaMemoryException;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.verbs.CompletionChannel;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.Gid;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.WorkCompletion;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Deque;
import java.util.Random;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * Opens a {@link DevicePair}, builds {@link Peer}s on it, connects them and waits for completions with a
 * deadline. Every wait drives the engines itself when the pair runs in CALLER mode. Closing the harness closes
 * everything it made, newest first, and then both devices, even after a failure, so the next test can open
 * the same devices again.
 */
public final class Harness implements AutoCloseable {
    /** How long any single wait may take before the test fails: a safety net, not a speed assertion. */
    public static final Duration DEFAULT_WAIT = Duration.ofSeconds(30);

    private final DevicePair pair;
    private final Context a;
    private final Context b;
    private final boolean caller;
    private final Deque<AutoCloseable> owned = new ArrayDeque<>();
    private final Random random;
    private final WorkCompletion scratch = new WorkCompletion();
    private boolean expectErrors;

    private Harness(DevicePair pair, Context a, Context b) {
        this.pair = pair;
        this.a = a;
        this.b = b;
        this.caller = pair.progress() == DevicePair.Progress.CALLER;
        this.random = new Random(pair.label().hashCode());
    }

    /** Opens both devices of the pair (skips the test, with the reason printed, if the pair is absent). */
    public static Harness open(DevicePair pair) {
        pair.assumePresent();
        Context a = openSide(pair, 0);
        Context b;
        try {
            b = openSide(pair, 1);
        } catch (RuntimeException | Error e) {
            a.close();
            throw e;
        }
        return new Harness(pair, a, b);
    }

    /**
     * Opens one side. A software device binds a UDP port; if another process (another module's tests run in
     * parallel) holds it for a moment, retry for up to 10 s, saying so, rather than fail on a shared machine.
     */
    private static Context openSide(DevicePair pair, int side) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            try {
                return pair.open(side);
            } catch (RuntimeException e) {
                String m = String.valueOf(e.getMessage());
                if (!m.contains("Address already in use") || System.nanoTime() - deadline > 0) {
                    throw e;
                }
                System.out.println("note: " + pair + " side " + side + ": " + m + "; retrying");
                LockSupport.parkNanos(200_000_000L);
            }
        }
    }

    public DevicePair pair() {
        return pair;
    }

    public Context a() {
        return a;
    }

    public Context b() {
        return b;
    }

    public Random random() {
        return random;
    }

    /**
     * Says this test makes errors on purpose (error completions, refused commands, overruns), so a device model's
     * error counters may be non-zero when the harness closes; without it they must all be zero
     * ({@link ModelCounterChecks}).
     */
    public Harness expectErrors() {
        expectErrors = true;
        return this;
    }

    /** Keeps {@code r} to close with the harness (before anything made earlier). */
    public <T extends AutoCloseable> T track(T r) {
        owned.push(r);
        return r;
    }

    /**
     * DMA memory for a test buffer. Locked like any DMA memory; if RLIMIT_MEMLOCK forbids locking that much, the
     * region is allocated unlocked (a software device does not need pinned pages) and the fact is printed.
     */
    public DmaRegion allocate(long bytes) {
        try {
            return track(DmaMemory.allocate(bytes));
        } catch (DmaMemoryException e) {
            System.out.println("note: " + bytes + "-byte buffer allocated unlocked: " + e.getMessage());
            return track(DmaMemory.allocate(DmaOptions.of(bytes).lock(false)));
        }
    }

    public Peer peerA(PeerSpec spec) {
        return peer(a, spec, random.nextInt() & 0xFFFFFF);
    }

    public Peer peerB(PeerSpec spec) {
        return peer(b, spec, random.nextInt() & 0xFFFFFF);
    }

    /** A peer on {@code ctx} starting its send PSNs at {@code psn}. */
    public Peer peer(Context ctx, PeerSpec spec, int psn) {
        ProtectionDomain pd = spec.pd != null ? spec.pd : track(ctx.allocatePd());
        DmaRegion mem = allocate(spec.bufferBytes);
        MemoryRegion mr = track(pd.register(mem, 0, mem.length(), spec.mrAccess));
        CompletionQueue sendCq = track(ctx.createCq(spec.cqDepth, spec.channel));
        CompletionQueue recvCq = spec.separateCqs ? track(ctx.createCq(spec.cqDepth, spec.channel)) : sendCq;
        QueuePair qp = track(pd.createQp(QpInitAttributes.of(spec.type, sendCq, recvCq)
                .maxSendWr(spec.maxSendWr).maxRecvWr(spec.maxRecvWr)
                .maxSendSge(spec.maxSendSge).maxRecvSge(spec.maxRecvSge)
                .maxInlineData(spec.maxInlineData).sqSigAll(spec.sqSigAll).srq(spec.srq)));
        int gidIndex = Gids.roceIndex(ctx);
        Gid gid = ctx.queryGid(1, gidIndex);
        return new Peer(this, ctx, pd, mem, mr, sendCq, recvCq, qp, psn, gidIndex, gid);
    }

    /**
     * A second QP in {@code sibling}'s PD, over the same memory and MR (its own CQs): another connection to the same
     * registrations, e.g. to show that a type 2 memory window answers only its own QP.
     */
    public Peer peerSharing(Peer sibling, PeerSpec spec) {
        Context ctx = sibling.ctx();
        CompletionQueue sendCq = track(ctx.createCq(spec.cqDepth, spec.channel));
        CompletionQueue recvCq = spec.separateCqs ? track(ctx.createCq(spec.cqDepth, spec.channel)) : sendCq;
        QueuePair qp = track(sibling.pd().createQp(QpInitAttributes.of(spec.type, sendCq, recvCq)
                .maxSendWr(spec.maxSendWr).maxRecvWr(spec.maxRecvWr)
                .maxSendSge(spec.maxSendSge).maxRecvSge(spec.maxRecvSge)
                .maxInlineData(spec.maxInlineData).sqSigAll(spec.sqSigAll)));
        return new Peer(this, ctx, sibling.pd(), sibling.mem(), sibling.mr(), sendCq, recvCq, qp,
                random.nextInt() & 0xFFFFFF, sibling.gidIndex(), sibling.gid());
    }

    /** The smaller active MTU of the two ports: what rdma-core's tools would pick. */
    public Mtu activeMtu() {
        Mtu ma = a.queryPort(1).activeMtu();
        Mtu mb = b.queryPort(1).activeMtu();
        return ma.bytes() <= mb.bytes() ? ma : mb;
    }

    /** Connects two RC (or UC) QPs to each other with the default attributes and the active MTU. */
    public void connect(Peer x, Peer y) {
        connect(x, y, RcParams.defaults());
    }

    /** RESET -> INIT -> RTR -> RTS on both sides, each with the other's QPN, PSN and GID. */
    public void connect(Peer x, Peer y, RcParams p) {
        Mtu mtu = p.mtu != null ? p.mtu : activeMtu();
        x.toInit(p.qpAccess);
        y.toInit(p.qpAccess);
        x.toRtr(y, mtu, p);
        y.toRtr(x, mtu, p);
        x.toRts(p);
        y.toRts(p);
    }

    /** One duty cycle of both engines if the pair runs in CALLER mode; nothing otherwise. */
    public int progress() {
        if (!caller) {
            return 0;
        }
        return a.progress() + b.progress();
    }

    /** Waits for one completion on {@code cq}; fails naming {@code what} after {@link #DEFAULT_WAIT}. */
    public WorkCompletion await(CompletionQueue cq, String what) {
        return await(cq, 1, what, DEFAULT_WAIT)[0];
    }

    /** Waits for {@code n} completions (copies, in CQ order). */
    public WorkCompletion[] await(CompletionQueue cq, int n, String what) {
        return await(cq, n, what, DEFAULT_WAIT);
    }

    public WorkCompletion[] await(CompletionQueue cq, int n, String what, Duration limit) {
        WorkCompletion[] out = new WorkCompletion[n];
        int got = 0;
        Idle idle = new Idle();
        long deadline = System.nanoTime() + limit.toNanos();
        while (got < n) {
            if (cq.poll(scratch) == 1) {
                out[got++] = new WorkCompletion().copyFrom(scratch);
                idle.reset();
                continue;
            }
            if (System.nanoTime() - deadline > 0) {
                StringBuilder sb = new StringBuilder();
                for (int i = 0; i < got; i++) {
                    sb.append("\n  got: ").append(out[i]);
                }
                fail("timed out after " + limit.toMillis() + " ms waiting for " + what + " on " + cq.describe()
                        + " of " + cq.context().name() + ": " + got + " of " + n + " completion(s) arrived" + sb
                        + "\n  " + a.name() + " counters (non-zero): " + nonZero(a)
                        + "\n  " + b.name() + " counters (non-zero): " + nonZero(b)
                        + "\n  kernel " + kernelUdp());
            }
            idle.idle(progress());
        }
        return out;
    }

    /** Waits until {@code done} holds, driving the engines; fails naming {@code what} after {@code limit}. */
    public void awaitCondition(BooleanSupplier done, String what, Duration limit) {
        Idle idle = new Idle();
        long deadline = System.nanoTime() + limit.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("timed out after " + limit.toMillis() + " ms waiting for " + what);
            }
            idle.idle(progress());
        }
    }

    /** Lets the engines run for {@code quiet} and asserts nothing completed on {@code cq} meanwhile. */
    public void assertNoCompletion(CompletionQueue cq, Duration quiet, String why) {
        Idle idle = new Idle();
        long end = System.nanoTime() + quiet.toNanos();
        while (System.nanoTime() - end < 0) {
            if (cq.poll(scratch) == 1) {
                fail("unexpected completion on " + cq.describe() + " of " + cq.context().name() + " (" + why + "): " + scratch);
            }
            idle.idle(progress());
        }
    }

    /**
     * Waits for one completion event on {@code ch}, driving the engines in CALLER mode; fails naming
     * {@code what} after {@link #DEFAULT_WAIT}. Returns the CQ the event names.
     */
    public CompletionQueue awaitEvent(CompletionChannel ch, String what) {
        long deadline = System.nanoTime() + DEFAULT_WAIT.toNanos();
        Idle idle = new Idle();
        try {
            while (true) {
                CompletionQueue cq = ch.getEvent(caller ? 0 : 10);
                if (cq != null) {
                    return cq;
                }
                if (System.nanoTime() - deadline > 0) {
                    fail("timed out after " + DEFAULT_WAIT.toMillis() + " ms waiting for a completion event: " + what);
                }
                if (caller) {
                    idle.idle(progress());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted waiting for " + what, e);
        }
    }

    /** Lets the engines run for {@code quiet} and asserts no completion event was raised on {@code ch}. */
    public void assertNoEvent(CompletionChannel ch, Duration quiet, String why) {
        run(quiet);
        if (ch.pendingEvents() != 0) {
            fail("unexpected completion event (" + why + "): " + ch.pendingEvents() + " pending");
        }
    }

    /** Runs the engines (CALLER mode) or just sleeps (THREAD mode) for {@code d}. */
    public void run(Duration d) {
        Idle idle = new Idle();
        long end = System.nanoTime() + d.toNanos();
        while (System.nanoTime() - end < 0) {
            idle.idle(progress());
        }
    }

    @Override
    public void close() {
        RuntimeException first = null;
        while (!owned.isEmpty()) {
            try {
                owned.pop().close();
            } catch (Exception e) {
                if (first == null) {
                    first = new IllegalStateException("closing a test resource failed: " + e.getMessage(), e);
                }
            }
        }
        // After the test's objects are gone (teardown must not upset the model either), before the devices close.
        List<String> bad = new ArrayList<>();
        for (Context c : new Context[] {a, b}) {
            for (String v : ModelCounterChecks.violations(c, !expectErrors)) {
                bad.add(c.name() + ": " + v);
            }
        }
        for (Context c : new Context[] {b, a}) {
            try {
                c.close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        if (first != null) {
            throw first;
        }
        if (!bad.isEmpty()) {
            throw new AssertionError("device model counters not zero after a test meant to be "
                    + (expectErrors ? "free of driver mistakes" : "clean") + " on " + pair + ":\n  " + String.join("\n  ", bad));
        }
    }

    /** Spin a little, then yield, then park briefly: the engine threads share two cores with the test. */
    private static final class Idle {
        private int idleRounds;

        void reset() {
            idleRounds = 0;
        }

        void idle(int workDone) {
            if (workDone > 0) {
                idleRounds = 0;
                return;
            }
            idleRounds++;
            if (idleRounds < 64) {
                Thread.onSpinWait();
            } else if (idleRounds < 256) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(20_000);
            }
        }
    }

    /** The kernel's UDP counters (/proc/net/snmp): a full socket buffer drops a datagram before any device sees it. */
    private static String kernelUdp() {
        try {
            List<String> lines = java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/net/snmp"));
            StringBuilder sb = new StringBuilder();
            for (String l : lines) {
                if (l.startsWith("Udp:")) {
                    sb.append(l).append(" | ");
                }
            }
            return sb.toString();
        } catch (java.io.IOException | RuntimeException e) {
            return "(udp counters unavailable: " + e + ")";
        }
    }

    /** A context's non-zero counters, for a timeout's message (what was dropped, and why). */
    public static String nonZero(Context ctx) {
        try {
            StringBuilder sb = new StringBuilder();
            ctx.statistics().forEach((k, v) -> {
                if (v != 0) {
                    sb.append(k).append('=').append(v).append(' ');
                }
            });
            return sb.toString();
        } catch (RuntimeException e) {
            return "(unavailable: " + e + ")";
        }
    }
}
