package io.jhca.mlx5;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.cmd.CmdTrace;
import io.jhca.mlx5.cmd.QCounterLayouts;
import io.jhca.mlx5.init.Hca;
import io.jhca.mlx5.init.Mlx5Options;
import io.jhca.mlx5.ring.Bfreg;
import io.jhca.mlx5.ring.BfregPool;
import io.jhca.mlx5.ring.DbrPool;
import io.jhca.mlx5.ring.SqBuffer;
import io.jhca.mlx5.spi.Mlx5Function;
import io.jhca.verbs.AsyncEvent;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.DeviceAttributes;
import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.Gid;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.PortAttributes;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.VerbsResource;

/**
 * An open mlx5 device: a ConnectX function brought up by {@link io.jhca.mlx5.init.HcaBringUp} (command queue, pages, caps, UAR, async
 * EQ, RoCE GIDs), the UAR page's bfregs (one shared, the others for
 * single-threaded QPs), the doorbell records, and the tables that map device
 * numbers back to objects (QPN for CQEs and events, CQN for events, lkey for inline data). Closing it tears the
 * function down in reverse and closes it.
 */
public final class Mlx5Context extends Context {

    private final Mlx5Function function;
    private final Hca hca;
    private final DeviceAttributes device;
    private final PortAttributes port;
    private final BfregPool bfregs;
    private final int bfMode;
    private final DbrPool dbrs;
    private final NumberTable<Mlx5Qp> qps = new NumberTable<>();
    private final NumberTable<Mlx5Cq> cqs = new NumberTable<>();
    private final NumberTable<MemoryRegion> mrs = new NumberTable<>();
    private final NumberTable<Mlx5Srq> srqs = new NumberTable<>();
    private final Map<DmaRegion, int[]> mappings = new IdentityHashMap<>();
    private final AtomicInteger mkeyTag = new AtomicInteger();
    private final Mlx5Events events;
    /** Q counter sets of QPs that have one of their own (Mlx5Options.perQpCounters). */
    private final java.util.Set<Integer> qpCounterSets = new java.util.LinkedHashSet<>();
    /** What the sets of destroyed QPs had counted when they were freed (the kernel keeps a bound counter's history). */
    private final long[] qpCounterHistory = new long[QCounterLayouts.COUNTERS.size()];

    /**
     * A device over a function already brought up ({@link io.jhca.mlx5.init.HcaBringUp#bringUp}); {@code info}
     * carries the node GUID the bring-up learned. On failure the function is torn down again (not closed).
     */
    Mlx5Context(DeviceInfo info, Mlx5Function function, Hca hca) {
        super(info);
        this.function = function;
        this.hca = hca;
        Mlx5Options options = hca.options();
        try {
            this.device = Mlx5Attributes.device(hca.caps(), hca.gids(), hca.fwVersion(), function.pciDeviceId());
            this.port = Mlx5Attributes.port(hca.caps(), hca.gids());
            int bfRegSize = hca.caps().logBfRegSize() > 0 ? 1 << hca.caps().logBfRegSize() : 0;
            this.bfregs = new BfregPool(function.bar0(), hca.uar(), bfRegSize, hca.caps().bf());
            this.bfMode = switch (options.blueFlame()) {
                case OFF -> SqBuffer.BF_OFF;
                case AUTO -> SqBuffer.BF_INLINE;
                case PREFER -> SqBuffer.BF_PREFER;
            };
            this.dbrs = new DbrPool(function::allocateDma);
            this.events = new Mlx5Events(this, hca);
            this.events.start();
            hca.commands().queue().afterEachCommand(events::pollIfBacklogged);
        } catch (RuntimeException e) {
            try {
                hca.close();
            } catch (RuntimeException closeFailure) {
                e.addSuppressed(closeFailure);
            }
            throw e;
        }
    }

    public Mlx5Function function() {
        return function;
    }

    /** The brought-up function (command queue, caps, UAR, EQ): for tools and tests. */
    public Hca hca() {
        return hca;
    }

    /** Interrupts that woke the event thread so far: 0 when the function has no interrupt line (polling mode). */
    public long eqInterrupts() {
        return events.interrupts();
    }

    /**
     * Of {@link #eqInterrupts()}, the wake-ups whose EQ poll found command completion entries: proof that command
     * completions arrive as interrupts.
     */
    public long commandInterrupts() {
        return events.commandInterrupts();
    }

    /**
     * Of {@link #eqInterrupts()}, the wake-ups whose EQ poll found completion (COMP) entries: proof that CQ events
     * arrive by interrupt.
     */
    public long completionInterrupts() {
        return events.completionInterrupts();
    }

    /** Turns the command trace on (a sink, e.g. {@code CmdTrace.to(System.err)}) or off (null), at once. */
    public void traceCommands(CmdTrace sink) {
        hca.trace(sink);
    }

    /**
     * The port's Q counter set, read with QUERY_Q_COUNTER (without clearing it): every counter of
     * {@link QCounterLayouts#COUNTERS} under its mlx5_ifc name, which is the name mlx5_ib gives it in
     * {@code rdma statistic show} (out_of_sequence, duplicate_request, rnr_nak_retry_err, local_ack_timeout_err,
     * req_remote_access_errors, ...). The device counts in 32 bits, and so do these values. Empty when the device
     * offers no Q counters. Runs a command: not for the data path.
     */
    @Override
    public Map<String, Long> statistics() {
        int set = hca.qCounter();
        if (set < 0) {
            return Collections.emptyMap();
        }
        long[] values = queryQCounter(set);
        synchronized (qpCounterSets) {
            // QPs with sets of their own count there, not in the port's set: the device reports them all (as the
            // kernel's rdma_counter_get_hwstat_value adds bound counters and their history to the port's)
            for (int own : qpCounterSets) {
                long[] v = queryQCounter(own);
                for (int n = 0; n < values.length; n++) {
                    values[n] += v[n];
                }
            }
            for (int n = 0; n < values.length; n++) {
                values[n] += qpCounterHistory[n];
            }
        }
        return byName(values);
    }

    static Map<String, Long> byName(long[] values) {
        Map<String, Long> m = new LinkedHashMap<>();
        for (int n = 0; n < values.length; n++) {
            m.put(QCounterLayouts.COUNTERS.get(n), values[n]);
        }
        return m;
    }

    long[] queryQCounter(int set) {
        try {
            return hca.commands().queryQCounter(set, false);
        } catch (RuntimeException e) {
            throw Mlx5Errors.of("QUERY_Q_COUNTER " + set + " on " + name(), e);
        }
    }

    /** A Q counter set for one QP (Mlx5Options.perQpCounters), or -1 when the device has none. */
    int allocQpCounter() {
        if (hca.qCounter() < 0) {
            return -1;
        }
        int set = hca.commands().allocQCounter();
        synchronized (qpCounterSets) {
            qpCounterSets.add(set);
        }
        return set;
    }

    /** Frees a destroyed QP's set, keeping what it counted in the device's statistics. */
    void freeQpCounter(int set) {
        synchronized (qpCounterSets) {
            // a dead device cannot be asked: what the set counted is lost with it
            long[] last = deadReason() != null ? new long[qpCounterHistory.length] : queryQCounter(set);
            for (int n = 0; n < last.length; n++) {
                qpCounterHistory[n] += last[n];
            }
            qpCounterSets.remove(set);
            hca.commands().deallocQCounter(set);
        }
    }

    @Override
    public DeviceAttributes queryDevice() {
        return device;
    }

    @Override
    protected PortAttributes driverQueryPort(int p) {
        return port;
    }

    @Override
    protected Gid driverQueryGid(int p, int index) {
        return hca.gids().gid(index);
    }

    @Override
    protected ProtectionDomain driverAllocPd() {
        return Mlx5Pd.allocate(this);
    }

    @Override
    protected CompletionQueue driverCreateCq(int cqe) {
        return Mlx5Cq.create(this, cqe);
    }

    @Override
    protected void destroy() {
        hca.commands().queue().afterEachCommand(null);
        events.stop();
        RuntimeException failure = null;
        try {
            hca.close();
        } catch (RuntimeException e) {
            failure = e;
        }
        if (failure == null) {
            dbrs.close();
        }
        try {
            function.close();
        } catch (RuntimeException e) {
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        }
        if (failure != null) {
            throw Mlx5Errors.of("close " + name(), failure);
        }
    }

    // ---- for the objects of this device ----

    Bfreg bfreg() {
        return bfregs.shared();
    }

    /** The UAR page's bfregs: single-threaded QPs get one of their own while they last. */
    BfregPool bfregs() {
        return bfregs;
    }

    int blueFlameMode() {
        return bfMode;
    }

    DbrPool dbrs() {
        return dbrs;
    }

    NumberTable<Mlx5Qp> qps() {
        return qps;
    }

    NumberTable<Mlx5Cq> cqs() {
        return cqs;
    }

    NumberTable<MemoryRegion> mrs() {
        return mrs;
    }

    NumberTable<Mlx5Srq> srqs() {
        return srqs;
    }

    Mlx5Events events() {
        return events;
    }

    /**
     * mkey_7_0 of the next key: a rolling 8-bit tag, so a reused mkey index gets a different key. It runs 1..255 and
     * skips 0, so no key can be 0x100 (index 1, tag 0), which is MLX5_INVALID_LKEY, the receive WQE terminator.
     */
    int nextMkeyTag() {
        return 1 + Math.floorMod(mkeyTag.getAndIncrement(), 255);
    }

    /** Makes a region reachable by the device for its first MR (Mlx5Function.mapForDevice), counting users. */
    synchronized void mapForDevice(DmaRegion region) {
        int[] n = mappings.get(region);
        if (n == null) {
            function.mapForDevice(region);
            mappings.put(region, new int[] {1});
        } else {
            n[0]++;
        }
    }

    /** Undoes {@link #mapForDevice} after its last MR is gone. */
    synchronized void unmapForDevice(DmaRegion region) {
        int[] n = mappings.get(region);
        if (n == null) {
            throw new VerbsException(VerbsException.EINVAL, "region was not mapped for the device");
        }
        if (--n[0] == 0) {
            mappings.remove(region);
            function.unmapForDevice(region);
        }
    }

    /** Why the device was declared dead, or null while it lives (mlx5_core's internal-error state). */
    String deadReason() {
        return hca.cmdq().deadReason();
    }

    /**
     * Refuses {@code what} on {@code resource} with EIO once the device is dead, as mlx5_ib's post_send, post_recv and
     * post_srq_recv do in internal-error state. One volatile read while alive: the message is built only when thrown.
     */
    void checkAlive(String what, VerbsResource resource) {
        String dead = deadReason();
        if (dead != null) {
            throw new VerbsException(VerbsException.EIO, what + " on " + resource.describe() + ": device " + name()
                    + " is dead (" + dead + ")");
        }
    }

    /**
     * The device is dead (mlx5_ib_handle_internal_error): no command reaches it from now on, every QP is in ERR, the
     * CQs of QPs with outstanding WRs raise a completion event so that a sleeping poller wakes and finds the flushes
     * ({@link Mlx5Cq} completes them in software), and one DEVICE_FATAL event names the reason. Later posts fail with
     * EIO.
     */
    void deviceDead(String why) {
        hca.cmdq().declareDead(why);
        java.util.List<Mlx5Qp> all = qps.values();
        java.util.List<Mlx5Cq> woken = new java.util.ArrayList<>();
        for (Mlx5Cq cq : cqs.values()) {
            for (Mlx5Qp qp : all) {
                if (qp.hasOutstanding(cq)) {
                    woken.add(cq);
                    break;
                }
            }
        }
        for (Mlx5Qp qp : all) {
            qp.deviceDead();
        }
        for (Mlx5Cq cq : woken) {
            cq.deviceDead();
        }
        event(new AsyncEvent(AsyncEvent.Type.DEVICE_FATAL, describe(), "device not responding: " + why));
    }

    /** Posts an asynchronous event (for the event handler). */
    void event(AsyncEvent e) {
        postAsyncEvent(e);
    }

    /** QP1 is created with qpc.st QP1, as mlx5_ib creates its GSI QP (the device puts it at QPN 1). */
    @Override
    public boolean supportsGsi() {
        return true;
    }
}
