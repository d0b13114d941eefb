package io.jhca.verbs;

/**
 * An open device ({@code struct ibv_context}). Providers subclass it; the shared rules (limits, lifetimes)
 * are enforced here so every provider behaves the same.
 */
public abstract class Context extends VerbsResource {
    private final DeviceInfo device;
    private final AsyncEventChannel asyncEvents = new AsyncEventChannel(this);

    protected Context(DeviceInfo device) {
        super("context");
        this.device = device;
    }

    public final DeviceInfo device() {
        return device;
    }

    public final String name() {
        return device.name();
    }

    @Override
    public String describe() {
        return "device " + device.name();
    }

    /** What ibv_query_device reports. */
    public abstract DeviceAttributes queryDevice();

    /** What ibv_query_port reports for a port (1-based). */
    public final PortAttributes queryPort(int port) {
        checkOpen();
        checkPort(port);
        return driverQueryPort(port);
    }

    /** The GID at {@code index} of the port's table; {@link Gid#ZERO} for an empty entry. */
    public final Gid queryGid(int port, int index) {
        checkOpen();
        checkPort(port);
        int n = driverQueryPort(port).gidTblLen();
        if (index < 0 || index >= n) {
            throw new VerbsException(VerbsException.EINVAL, "GID index " + index + " out of range 0.." + (n - 1));
        }
        return driverQueryGid(port, index);
    }

    public final ProtectionDomain allocatePd() {
        checkOpen();
        return driverAllocPd();
    }

    /** A completion queue with room for at least {@code cqe} completions, shared between threads (polls lock). */
    public final CompletionQueue createCq(int cqe) {
        return createCq(cqe, 0);
    }

    /**
     * A completion queue with room for at least {@code cqe} completions and {@link CqFlags} options
     * ({@code ibv_create_cq_ex}); {@link CqFlags#SINGLE_THREADED} drops the poll lock.
     */
    public final CompletionQueue createCq(int cqe, int flags) {
        return createCq(cqe, null, flags);
    }

    /** A completion queue that reports completion events to {@code channel} (null: none). */
    public final CompletionQueue createCq(int cqe, CompletionChannel channel) {
        return createCq(cqe, channel, 0);
    }

    /**
     * A completion queue with {@link CqFlags} options that reports completion events to {@code channel}
     * ({@code ibv_create_cq} with a {@code comp_channel}; null: none).
     */
    public final CompletionQueue createCq(int cqe, CompletionChannel channel, int flags) {
        checkOpen();
        if (channel != null && channel.context() != this) {
            throw new VerbsException(VerbsException.EINVAL, "create CQ: " + channel.describe() + " belongs to another device");
        }
        if (channel != null) {
            channel.checkOpen();
        }
        if ((flags & ~CqFlags.ALL) != 0) {
            throw new VerbsException(VerbsException.EINVAL, "create CQ: unknown flags 0x" + Integer.toHexString(flags & ~CqFlags.ALL));
        }
        int max = queryDevice().maxCqe();
        if (cqe < 1 || cqe > max) {
            throw new VerbsException(VerbsException.EINVAL, "create CQ: cqe " + cqe + " out of range 1.." + max);
        }
        CompletionQueue cq = driverCreateCq(cqe);
        cq.singleThreaded((flags & CqFlags.SINGLE_THREADED) != 0);
        if (channel != null) {
            try {
                cq.attach(channel);
            } catch (RuntimeException e) {
                // the channel closed since its check (another thread): the CQ goes, or it would hold the device open
                cq.close();
                throw e;
            }
        }
        return cq;
    }

    /** A channel for CQ completion events ({@code ibv_create_comp_channel}). */
    public final CompletionChannel createCompletionChannel() {
        checkOpen();
        return new CompletionChannel(this);
    }

    /**
     * Drives a software device's engine from the caller's thread, for providers configured without their own
     * progress thread; returns the amount of work done. A software device with a progress thread takes the call as
     * well, and while a polling loop keeps calling it the thread makes way (the rxe provider's threaded devices take
     * an empty CQ poll as such a call too). Hardware needs no progress: 0.
     */
    public int progress() {
        return 0;
    }

    /**
     * True if the device moves packets only while the application calls {@link #progress()} (a software device
     * without its own thread): a thread asleep on a channel then drives nothing, so it must look at the channel
     * without blocking and call {@link #progress()} in between. False for hardware and threaded software devices.
     */
    public boolean progressByCaller() {
        return false;
    }

    /**
     * The device's counters, as {@code rdma statistic show} lists them: name to value, in the provider's order
     * (packets and bytes each way, retransmissions, NAKs, drops by reason, ...). A snapshot; empty if the
     * provider keeps none.
     */
    public java.util.Map<String, Long> statistics() {
        return java.util.Collections.emptyMap();
    }

    /**
     * The next asynchronous event, or null: non-blocking, and acknowledged at once (it holds nothing open). Takes
     * from the same queue as {@link #asyncEventChannel()}.
     */
    public final AsyncEvent pollAsyncEvent() {
        return asyncEvents.poll();
    }

    /**
     * The device's asynchronous event channel ({@code context->async_fd}): blocking {@code ibv_get_async_event},
     * a selectable channel, and {@code ibv_ack_async_event}. One per context, closed with it.
     */
    public final AsyncEventChannel asyncEventChannel() {
        return asyncEvents;
    }

    /** Provider side: report an asynchronous event. */
    protected final void postAsyncEvent(AsyncEvent event) {
        asyncEvents.post(event);
    }

    @Override
    void afterClose() {
        asyncEvents.close();
    }

    private void checkPort(int port) {
        int n = queryDevice().physPortCnt();
        if (port < 1 || port > n) {
            throw new VerbsException(VerbsException.EINVAL, "port " + port + " out of range 1.." + n);
        }
    }

    protected abstract PortAttributes driverQueryPort(int port);

    protected abstract Gid driverQueryGid(int port, int index);

    protected abstract ProtectionDomain driverAllocPd();

    protected abstract CompletionQueue driverCreateCq(int cqe);

    /**
     * The type of the GID at {@code index} ({@code ibv_query_gid_type}): what the provider says, by default RoCE v2
     * on an Ethernet port and IB on an InfiniBand one.
     */
    public final GidType queryGidType(int port, int index) {
        queryGid(port, index); // the same checks: open, port, index range
        return driverQueryGidType(port, index);
    }

    /** Provider side of {@link #queryGidType}; override where a table holds more than RoCE v2 entries. */
    protected GidType driverQueryGidType(int port, int index) {
        return driverQueryPort(port).linkLayer() == LinkLayer.ETHERNET ? GidType.ROCE_V2 : GidType.IB;
    }

    /** True if {@link QpInitAttributes#gsi} QPs (QP1, for management datagrams) can be created on this device. */
    public boolean supportsGsi() {
        return false;
    }
}
