package io.jhca.connectx;

import java.net.InetAddress;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.memory.DmaRegion;
import io.jhca.rxe.RxeContext;
import io.jhca.rxe.RxeDeviceConfig;
import io.jhca.mlx5.eq.EventType;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpState;

/**
 * One simulated ConnectX function: firmware and hardware, run as an Agrona {@link Agent} on one thread (an
 * AgentRunner, see {@link ModelFunction}). Each duty cycle, in this order:
 * <ol>
 *   <li>requests from other threads (unmapping memory the device may have cached translations for);</li>
 *   <li>the initialization segment: boot, command queue address, command doorbell: commands are fetched, executed by
 *       {@link Firmware} and answered through the shared {@link io.jhca.connectx.CmdQueueDevice};</li>
 *   <li>the UAR pages: CQ arm, EQ and send doorbells;</li>
 *   <li>the rings: receive and send WQEs up to the doorbell records go to the rxe transport;</li>
 *   <li>the rxe engine: one duty cycle of the RoCEv2 wire (progress mode CALLER: this thread);</li>
 *   <li>completions: rxe completions become CQEs; WQEs the device answers itself are answered in order.</li>
 * </ol>
 * Nothing the driver does can stop the thread: malformed input ends as a status or an error CQE, an unexpected
 * exception is counted ({@link ModelCounters.Counter#MODEL_ERRORS}) and the next cycle runs.
 */
public final class ConnectXModel implements Agent {

    private final String name;
    private final Iommu iommu;
    private final ModelCounters counters = new ModelCounters();
    private final RxeMirror rxe;
    private final AsyncEventRelay asyncEvents;
    private final DeviceState st;
    private final DataPath dataPath;
    private final Firmware firmware;
    private final InitSegmentDevice initSeg;
    private final UarDoorbells uars;
    private final ConcurrentLinkedQueue<Request> requests = new ConcurrentLinkedQueue<>();
    private final ModelSleeper sleeper = new ModelSleeper(this);
    private volatile Thread thread;
    private volatile boolean stopped;
    private volatile boolean hung;
    private volatile boolean dataPathPaused;
    private volatile boolean removed;
    private boolean removalShown;
    private volatile Throwable lastError;

    /** Sends the function's MSI-X interrupts (the vector number) to {@code sink}; null stops them. */
    public void interrupts(java.util.function.IntConsumer sink) {
        st.interrupts = sink;
    }

    private static final class Request {
        final Runnable action;
        final CountDownLatch done = new CountDownLatch(1);
        RuntimeException error;

        Request(Runnable action) {
            this.action = action;
        }
    }

    ConnectXModel(String name, InetAddress address, UnsafeBuffer bar, Iommu iommu, long preInitNanos,
                  UnaryOperator<RxeDeviceConfig.Builder> wire) {
        this.name = name;
        this.iommu = iommu;
        this.rxe = new RxeMirror(name, address, wire);
        this.st = new DeviceState(name, iommu, counters, rxe, address);
        this.dataPath = new DataPath(st, rxe.context.queryPort(1).activeMtu().bytes());
        this.asyncEvents = new AsyncEventRelay(st, rxe.context);
        // A packet that needs a receive WQE makes the hardware read the RQ doorbell record then and there; without
        // this, a WQE posted after this duty cycle's fetch would be missed and a UD datagram dropped.
        rxe.context.engine().onEmptyReceiveQueue(dataPath::refillRecv);
        this.firmware = new Firmware(st, dataPath);
        this.initSeg = new InitSegmentDevice(bar, iommu, firmware, st, preInitNanos);
        this.uars = new UarDoorbells(bar, st);
    }

    @Override
    public String roleName() {
        return "jhca-mlx5-sim-" + name;
    }

    @Override
    public void onStart() {
        thread = Thread.currentThread();
    }

    @Override
    public int doWork() {
        int work = runRequests();
        if (removed) {
            if (!removalShown) {
                removalShown = true;
                initSeg.removed();
            }
            return work;
        }
        if (hung) {
            return work;
        }
        try {
            work += initSeg.poll(System.nanoTime());
            if (st.initialized && !dataPathPaused) {
                work += uars.poll();
                work += dataPath.fetch();
                work += rxe.progress();
                work += asyncEvents.relay();
                work += dataPath.drainCompletions();
                work += dataPath.resolvePending();
            }
        } catch (RuntimeException e) {
            failed(e);
            work++;
        }
        return work;
    }

    /**
     * Nanoseconds from {@code now} until the model has something to do by the clock (the health counter's tick, a
     * command queue scan, the end of pre-init, an rxe transport timer), Long.MAX_VALUE if nothing: how long an idle
     * firmware thread may sleep. Firmware thread only.
     */
    long nanosToNextTimer(long now) {
        if (!requests.isEmpty()) {
            return 0;
        }
        if (removed || hung) {
            return Long.MAX_VALUE;   // the health counter stands still: that is how a driver sees the hang
        }
        long next = initSeg.nanosToNextTimer(now);
        if (st.initialized && !dataPathPaused) {
            next = Math.min(next, rxe.context.engine().nanosToNextTimer(now));
        }
        return next;
    }

    /** The port's link, whose sockets an idle firmware thread sleeps on. */
    io.jhca.rxe.link.Link link() {
        return rxe.context.engine().link();
    }

    /** Whether the data path is paused ({@link #pauseDataPath}): UAR doorbells are not served. */
    boolean dataPathPaused() {
        return dataPathPaused;
    }

    /** Where the firmware thread of an in-process function sleeps when idle, and what wakes it. */
    ModelSleeper sleeper() {
        return sleeper;
    }

    private void failed(Throwable t) {
        counters.increment(ModelCounters.Counter.MODEL_ERRORS);
        if (lastError == null) {
            System.err.println("jhca mlx5 sim " + name + ": unexpected " + t);
            t.printStackTrace();
        }
        lastError = t;
    }

    @Override
    public void onClose() {
        stopped = true;
        runRequests();
        try {
            firmware.reset();
        } catch (RuntimeException e) {
            failed(e);
        }
        rxe.close();
        sleeper.close();
    }

    /** Runs {@code action} on the firmware thread and waits (inline if called from it or once it stopped). */
    void runOnFirmware(Runnable action) {
        if (stopped || thread == null || Thread.currentThread() == thread) {
            synchronized (this) {
                action.run();
            }
            return;
        }
        Request r = new Request(action);
        requests.offer(r);
        sleeper.wake();
        try {
            while (!r.done.await(10, TimeUnit.MILLISECONDS)) {
                if (stopped && requests.remove(r)) {
                    synchronized (this) {
                        action.run();
                    }
                    return;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for the device model " + name, e);
        }
        if (r.error != null) {
            throw r.error;
        }
    }

    private int runRequests() {
        int n = 0;
        Request r;
        while ((r = requests.poll()) != null) {
            try {
                synchronized (this) {
                    r.action.run();
                }
            } catch (RuntimeException e) {
                r.error = e;
            }
            r.done.countDown();
            n++;
        }
        return n;
    }

    /**
     * Takes {@code region} out of the IOMMU. Whatever the device cached inside it stops for good first, as a real
     * device would fault on its next access: queues go to error (CQ_ERROR event with CQ_ACCESS_VIOLATION for a CQ),
     * memory keys are invalidated and deregistered from the wire, firmware pages are forgotten.
     */
    void unmap(DmaRegion region) {
        runOnFirmware(() -> {
            List<Iommu.Entry> gone = iommu.unmap(region);
            for (Iommu.Entry e : gone) {
                fault(e);
            }
        });
    }

    private void fault(Iommu.Entry e) {
        initSeg.unmapped(e.iova(), e.length());
        for (DeviceQp qp : st.qpList) {
            if (!qp.faulted && ((qp.buffer != null && qp.buffer.overlapsIova(e.iova(), e.length()))
                    || (qp.dbrHost >= e.host() && qp.dbrHost < e.host() + e.length()))) {
                qp.faulted = true;
                counters.increment(ModelCounters.Counter.DMA_FAULTS);
                if (qp.rxeQp.state() != QpState.RESET && qp.rxeQp.state() != QpState.ERR) {
                    qp.rxeQp.modify(QpAttributes.toState(QpState.ERR));
                }
            }
        }
        for (DeviceCq cq : st.cqList) {
            if (!cq.error && (cq.ring.overlapsIova(e.iova(), e.length())
                    || (cq.dbrHost >= e.host() && cq.dbrHost < e.host() + e.length()))) {
                counters.increment(ModelCounters.Counter.DMA_FAULTS);
                cq.overrun(EventType.CQ_ERROR_ACCESS_VIOLATION);
            }
        }
        for (DeviceEq eq : st.eqs.values()) {
            if (!eq.faulted && eq.ring.overlapsIova(e.iova(), e.length())) {
                eq.faulted = true;
                counters.increment(ModelCounters.Counter.DMA_FAULTS);
            }
        }
        for (DeviceMkey k : st.mkeys.values()) {
            if (k.valid && k.overlapsHost(e.host(), e.length())) {
                k.valid = false;
                RxeMirror.deregister(k.rxeMr);
                k.rxeMr = null;
                counters.increment(ModelCounters.Counter.DMA_FAULTS);
            }
        }
        if (st.firmwarePages.removeIf(p -> p >= e.iova() && p < e.iova() + e.length())) {
            counters.increment(ModelCounters.Counter.DMA_FAULTS);
        }
    }

    /**
     * Lab and test hook: the firmware asks the driver for {@code numPages} more pages ({@code > 0}) or announces that
     * many it can give back ({@code < 0}), with a PAGE_REQUEST event on the EQ that asked for them.
     */
    public void requestPages(int numPages) {
        runOnFirmware(() -> firmware.requestPages(numPages));
    }

    // ------------------------------------------------------------------------------------------ failures

    /**
     * Lab and test hook: the firmware hangs. Nothing is served any more (commands, doorbells, the wire) and the health
     * counter stops, as when firmware is stuck; the driver's health polling must notice.
     */
    public void hang() {
        // on the firmware thread, between two duty cycles, as surpriseRemoval: set from another thread, a cycle under
        // way could still answer the next command and advance the health counter once more
        runOnFirmware(() -> hung = true);
    }

    /**
     * Lab and test hook: the function disappears from the bus. Every BAR0 read returns all ones from now on (what a
     * read of a removed or reset PCI function returns) and nothing is served, from the moment this returns.
     */
    public void surpriseRemoval() {
        // on the firmware thread, between two duty cycles: once this returns no command or doorbell is served, and
        // BAR0 reads all ones (set from another thread, a cycle under way could still answer one more command)
        runOnFirmware(() -> {
            removed = true;
            if (!removalShown) {
                removalShown = true;
                initSeg.removed();
            }
        });
    }

    // ------------------------------------------------------------------------------------------ diagnostics

    public String name() {
        return name;
    }

    public ModelCounters counters() {
        return counters;
    }

    /** The port's RoCEv2 transport (its counters and link, e.g. fault counters): diagnostics only. */
    public RxeContext wire() {
        return rxe.context;
    }

    /** The last command the firmware refused and why, or null. */
    public String lastCommandError() {
        return firmware.lastError();
    }

    /** The last unexpected exception inside the model (a model bug), or null. */
    public Throwable lastError() {
        return lastError;
    }

    /** The command queue address the driver programmed (0 before). */
    public long commandQueueIova() {
        return initSeg.queueIova();
    }

    /** The host address behind a device-visible range, -1 when the IOMMU has no mapping for all of it. */
    long hostAddress(long iova, long length) {
        return iommu.hostAddress(iova, length);
    }

    /** Whether INIT_HCA has run (and TEARDOWN_HCA not since). */
    public boolean initialized() {
        return st.initialized;
    }

    /** Firmware pages the device holds (a racy read from other threads: diagnostics only). */
    public int firmwarePages() {
        return st.firmwarePages.size();
    }

    // ------------------------------------------------------------------------------------------ benchmarks

    /**
     * Benchmark and test hook: stops (true) or resumes (false) the data path (UAR doorbells, WQEs, the wire,
     * completions) while commands, health and events go on, so a benchmark can play the device's completion side
     * itself and time only the driver. A pause is set on the firmware thread between two duty cycles: once this
     * returns, no cycle that read the old value is still running (set from another thread, a cycle under way
     * finished its data path work after the pause, and a test's WRs posted right after it could still be executed,
     * their packets received within that same cycle). A resume takes effect from the next cycle.
     */
    public void pauseDataPath(boolean paused) {
        if (paused) {
            runOnFirmware(() -> dataPathPaused = true);
        } else {
            dataPathPaused = false;
            sleeper.wake();
        }
    }

    /**
     * Benchmark hook: the ring of CQ {@code cqn} as one view of host memory (its CQEs at {@code i * cqe size}), when
     * its pages are contiguous in host memory (the driver allocated it as one buffer).
     */
    public UnsafeBuffer cqRing(int cqn) {
        UnsafeBuffer[] out = new UnsafeBuffer[1];
        runOnFirmware(() -> {
            DeviceCq cq = st.cqs.get(cqn);
            if (cq == null) {
                throw new IllegalArgumentException("no CQ 0x" + Integer.toHexString(cqn) + " on " + name);
            }
            out[0] = cq.ring.contiguousView();
        });
        return out[0];
    }
}
