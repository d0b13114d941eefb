package io.jhca.connectx;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;

import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.doorbell.MmioWindow;
import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.spi.InterruptLine;
import io.jhca.mlx5.spi.Mlx5Function;
import io.jhca.rxe.RxeDeviceConfig;

/**
 * A simulated ConnectX PCI function: BAR0 is 64 pages of off-heap memory (page 0 the initialization segment, UAR n at
 * n * 4 KiB) that a {@link ConnectXModel} on its own thread watches the way firmware and hardware watch registers;
 * DMA memory is ordinary pinned memory with identity IOVAs, entered into the model's IOMMU table, which is the only
 * memory the model ever touches. The port is the configured IP address, where the model's RoCEv2 transport listens.
 *
 * <p>Thread-safety: every method may be called from any thread; unmapping waits for the firmware thread to stop using
 * the memory. {@link #close} stops the firmware thread, destroys every object and frees all DMA memory handed out.
 */
public final class ModelFunction implements Mlx5Function {

    private static final int BAR0_BYTES = ModelCaps.BAR0_PAGES * 4096;
    /** System property that gives every simulated function its interrupt ({@link #withInterrupts}). */
    public static final String INTERRUPTS_PROPERTY = "jhca.mlx5.sim.interrupts";

    private final String name;
    private final InetAddress address;
    private final ByteBuffer barMemory;
    private final MmioWindow bar0;
    private final Iommu iommu = new Iommu();
    private final ConnectXModel model;
    private final AgentRunner runner;
    private final Map<ModelDmaRegion, Boolean> allocated = new IdentityHashMap<>();
    private final Map<DmaRegion, Boolean> mapped = new IdentityHashMap<>();
    private boolean closed;
    /** MSI-X vector 0 as the driver sees it, once {@link #withInterrupts} switched interrupts on. */
    private final Semaphore vector0 = new Semaphore(0);
    private final AtomicLong interruptsRaised = new AtomicLong();
    private volatile boolean interruptsOn;

    private ModelFunction(String name, InetAddress address, long preInitNanos, UnaryOperator<RxeDeviceConfig.Builder> wire) {
        this.name = name;
        this.address = address;
        this.barMemory = ByteBuffer.allocateDirect(BAR0_BYTES + 4096);
        long raw = new UnsafeBuffer(barMemory).addressOffset();
        UnsafeBuffer bar = new UnsafeBuffer(barMemory, (int) (-raw & 4095), BAR0_BYTES); // page-aligned like a BAR
        this.model = new ConnectXModel(name, address, bar, iommu, preInitNanos, wire);
        this.bar0 = new ModelBar(bar, model.sleeper());   // the driver's register writes wake a sleeping firmware
        this.runner = new AgentRunner(ModelConfig.idleStrategy(model.sleeper()), this::failed, null, model);
        AgentRunner.startOnThread(runner, r -> {
            Thread t = new Thread(r, model.roleName());
            t.setDaemon(true);
            return t;
        });
    }

    /** Powers on a function named {@code name} whose port is {@code address}. */
    public static ModelFunction open(String name, InetAddress address) {
        return new ModelFunction(name, address, InitSegmentDevice.DEFAULT_PRE_INIT_NANOS, UnaryOperator.identity());
    }

    /**
     * As {@link #open(String, InetAddress)}, with the port's RoCEv2 link configured further by {@code wire}: e.g.
     * {@code b -> b.txFaults(f).rxFaults(f).faultSeed(s)} for a lossy wire.
     */
    public static ModelFunction open(String name, InetAddress address, UnaryOperator<RxeDeviceConfig.Builder> wire) {
        return new ModelFunction(name, address, InitSegmentDevice.DEFAULT_PRE_INIT_NANOS, wire);
    }

    /**
     * As {@link #open(String, InetAddress)}, with the firmware's pre-init time: {@code initializing} stays set for
     * that long after power-on unless the driver writes the command queue address first.
     */
    public static ModelFunction open(String name, InetAddress address, long preInitMillis) {
        return new ModelFunction(name, address, preInitMillis * 1_000_000L, UnaryOperator.identity());
    }

    /**
     * Gives the function an MSI-X vector 0 for its async EQ ({@link #eqInterrupt}), as a ConnectX behind vfio has:
     * the model raises it when an armed EQ gets an entry. Call before the driver opens the function; without it the
     * driver polls the EQ. Also switched on for every function by {@value #INTERRUPTS_PROPERTY}=true.
     */
    public ModelFunction withInterrupts() {
        model.interrupts(vector -> {
            if (vector == 0) {
                interruptsRaised.incrementAndGet();
                vector0.release();
            }
        });
        interruptsOn = true;
        return this;
    }

    /** Interrupts the model raised on vector 0 so far. */
    public long interruptsRaised() {
        return interruptsRaised.get();
    }

    @Override
    public InterruptLine eqInterrupt() {
        if (!interruptsOn) {
            return null;
        }
        return new InterruptLine() {
            /** Raises seen by the waiter's last await: a permit with no raise since is a wakeUp. */
            private long seen = interruptsRaised.get();

            @Override
            public boolean await(long timeoutMillis) {
                try {
                    if (!vector0.tryAcquire(timeoutMillis, TimeUnit.MILLISECONDS)) {
                        return false;
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
                vector0.drainPermits(); // several raises before the wait are one wake-up, as with an eventfd
                long raised = interruptsRaised.get();
                boolean fired = raised != seen;
                seen = raised;
                return fired;
            }

            @Override
            public void wakeUp() {
                vector0.release();
            }

            @Override
            public String describe() {
                return "model vector 0";
            }
        };
    }

    private void failed(Throwable t) {
        model.counters().incrementAtomic(ModelCounters.Counter.MODEL_ERRORS);
        System.err.println("jhca mlx5 sim " + name + ": firmware thread error " + t);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String location() {
        return "sim:" + name;
    }

    @Override
    public int pciDeviceId() {
        return ModelCaps.PCI_DEVICE_ID;
    }

    @Override
    public MmioWindow bar0() {
        return bar0;
    }

    @Override
    public synchronized DmaRegion allocateDma(long bytes) {
        checkOpen();
        DmaRegion r = DmaMemory.allocate(bytes);
        try {
            iommu.map(r);
        } catch (RuntimeException e) {
            r.close();
            throw e;
        }
        ModelDmaRegion s = new ModelDmaRegion(r, this);
        allocated.put(s, Boolean.TRUE);
        return s;
    }

    /** Called by {@link ModelDmaRegion#close}: unmap from the device first, then free. */
    void release(ModelDmaRegion s) {
        synchronized (this) {
            if (allocated.remove(s) == null) {
                return;
            }
        }
        model.unmap(s.inner());
        try {
            s.inner().close();
        } catch (RuntimeException e) {
            // still retained (e.g. registered): give the device its mapping back and refuse
            iommu.map(s.inner());
            synchronized (this) {
                allocated.put(s, Boolean.TRUE);
            }
            throw e;
        }
    }

    /**
     * Makes a user region reachable by the device. The region is retained until {@link #unmapForDevice}, so closing
     * it while the device can still reach it is refused instead of leaving the device a dangling mapping.
     */
    @Override
    public synchronized void mapForDevice(DmaRegion region) {
        checkOpen();
        DmaRegion r = region instanceof ModelDmaRegion ? ((ModelDmaRegion) region).inner() : region;
        if (mapped.containsKey(r) || (region instanceof ModelDmaRegion && iommu.isMapped(r))
                || (r.length() > 0 && iommu.contains(r.iova(0), r.length()))) {
            return; // already reachable: device memory (or a slice of it), or mapped before
        }
        r.retain();
        try {
            iommu.map(r);
        } catch (RuntimeException e) {
            r.release();
            throw e;
        }
        mapped.put(r, Boolean.TRUE);
    }

    @Override
    public void unmapForDevice(DmaRegion region) {
        DmaRegion r = region instanceof ModelDmaRegion ? ((ModelDmaRegion) region).inner() : region;
        synchronized (this) {
            if (mapped.remove(r) == null) {
                return;
            }
        }
        model.unmap(r);
        r.release();
    }

    /** Regions from {@link #allocateDma} not freed yet: for leak checks in tests. */
    synchronized int dmaRegions() {
        return allocated.size();
    }

    @Override
    public List<InetAddress> portAddresses() {
        return List.of(address);
    }

    /** The device model (counters, diagnostics). */
    public ConnectXModel model() {
        return model;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("simulated function " + name + " is closed");
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        model.sleeper().stop();
        runner.close(); // the firmware thread stops; onClose destroys every object and the wire
        List<ModelDmaRegion> regions;
        List<DmaRegion> users;
        synchronized (this) {
            regions = new ArrayList<>(allocated.keySet());
            users = new ArrayList<>(mapped.keySet());
            allocated.clear();
            mapped.clear();
        }
        for (DmaRegion r : users) {
            iommu.unmap(r);
            r.release();
        }
        for (ModelDmaRegion s : regions) {
            iommu.unmap(s.inner());
            try {
                s.inner().close();
            } catch (RuntimeException e) {
                // retained by someone still holding it (an MR the driver leaked): its owner frees it
            }
        }
    }

    @Override
    public String toString() {
        return name + " (" + location() + ", port " + address.getHostAddress() + ")";
    }
}
