package io.jhca.rxe;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;

import org.agrona.concurrent.AgentRunner;

import io.jhca.rxe.link.FaultyLink;
import io.jhca.rxe.link.Link;
import io.jhca.rxe.link.MultiUdpLink;
import io.jhca.rxe.link.UdpLink;
import io.jhca.rxe.transport.Engine;
import io.jhca.rxe.transport.MrTable;
import io.jhca.rxe.transport.RxeCounters;
import io.jhca.rxe.transport.Tracer;
import io.jhca.rxe.wire.PcapWriter;
import io.jhca.verbs.AsyncEvent;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.DeviceAttributes;
import io.jhca.verbs.Gid;
import io.jhca.verbs.PortAttributes;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.VerbsException;

/**
 * An open rxe device: its UDP link (bound to {@code <address>:4791}, wrapped in a {@link FaultyLink} when faults
 * are configured), its key table, counters and progress {@link Engine}, run by its own thread or by
 * {@link #progress()} from the application's polling loop.
 */
public final class RxeContext extends Context {

    private final RxeDeviceConfig config;
    private final RxeDeviceAttributes attributes;
    private final Link link;
    private final RxeCounters counters = new RxeCounters();
    private final MrTable mrs = new MrTable();
    private final Engine engine;
    private final AgentRunner runner;
    private final Tracer tracer;
    private final AtomicInteger nextQpn = new AtomicInteger(RxeDeviceAttributes.FIRST_QPN);
    private final AtomicInteger nextCqn = new AtomicInteger(1);
    private final java.util.concurrent.atomic.AtomicBoolean gsiClaimed = new java.util.concurrent.atomic.AtomicBoolean();

    RxeContext(final RxeDeviceConfig config) {
        super(RxeProvider.info(config));
        this.config = config;
        this.attributes = new RxeDeviceAttributes(config.mac(), config.gidTable(), config.netdevMtu(),
                config.maxSrqSge());
        final Link opened;
        final java.net.InetSocketAddress bind = new java.net.InetSocketAddress(config.address(), UdpLink.ROCE_V2_PORT);
        // a fault-injecting link takes one datagram at a time, so its socket must not receive coalesced ones
        final boolean coalesce = config.gso() && !config.hasFaults();
        try {
            if (config.linkOpener() != null) {
                opened = config.linkOpener().open(bind);
            } else if (config.netdev() != null) {
                // as Linux rxe: every address of the netdev receives; the QP's source GID picks the sender
                final java.util.List<java.net.InetSocketAddress> binds = new java.util.ArrayList<>();
                for (final java.net.InetAddress a : attributes.gidTable().addresses()) {
                    binds.add(new java.net.InetSocketAddress(a, UdpLink.ROCE_V2_PORT));
                }
                opened = MultiUdpLink.open(binds, config.socketBuffer(), coalesce, config.ring());
            } else {
                opened = UdpLink.open(bind, config.socketBuffer(), coalesce, config.ring());
            }
        } catch (final IllegalStateException e) {
            throw new VerbsException(VerbsException.EIO, "open " + config.name() + ": " + e.getMessage(), e);
        }
        this.link = config.hasFaults()
                ? new FaultyLink(opened, config.txFaults(), config.rxFaults(), config.faultSeed()) : opened;
        final boolean threaded = config.progressMode() == ProgressMode.THREAD;
        this.engine = new Engine(config.name(), link, config.icrcMode(), attributes.port().activeMtu().bytes(),
                threaded, mrs, counters);
        engine.ackHoldNanos(config.ackHoldNanos());
        engine.icrcIdBias(config.icrcIdBias());
        Tracer t = null;
        if (config.pcap() != null) {
            try {
                t = new Tracer(PcapWriter.create(config.pcap(), PcapWriter.LINKTYPE_RAW));
                engine.tracer(t);
            } catch (final IOException e) {
                link.close();
                throw new VerbsException(VerbsException.EIO, "open " + config.name() + ": cannot write pcap "
                        + config.pcap() + ": " + e, e);
            }
        }
        this.tracer = t;
        if (threaded) {
            runner = new AgentRunner(config.newIdleStrategy(engine::sleep), this::engineFailed, null, engine);
            AgentRunner.startOnThread(runner, r -> {
                final Thread th = new Thread(r, engine.roleName());
                th.setDaemon(true);
                return th;
            });
        } else {
            runner = null;
        }
    }

    private void engineFailed(final Throwable t) {
        System.err.println("jhca rxe " + config.name() + ": engine error " + t);
    }

    public RxeDeviceConfig config() {
        return config;
    }

    /** Per-device counters (rxe hw_counters names and drop reasons). */
    public RxeCounters counters() {
        return counters;
    }

    @Override
    public java.util.Map<String, Long> statistics() {
        return counters.snapshot();
    }

    /** The packet link (a {@link FaultyLink} when faults are configured: its counters say what it did). */
    public Link link() {
        return link;
    }

    public Engine engine() {
        return engine;
    }

    public RxeDeviceAttributes attributes() {
        return attributes;
    }

    MrTable mrTable() {
        return mrs;
    }

    int allocateQpn() {
        final int qpn = nextQpn.getAndIncrement();
        if (qpn > 0xFFFFFF) {
            throw new VerbsException(VerbsException.ENOMEM, "create QP: QP numbers exhausted on " + name());
        }
        return qpn;
    }

    /** QP1: one per device (IBTA 16.1; rxe creates it with the port). */
    int claimGsiQpn() {
        if (!gsiClaimed.compareAndSet(false, true)) {
            throw new VerbsException(VerbsException.EBUSY, "create QP: " + name() + " already has its GSI QP (QP1)");
        }
        return 1;
    }

    void releaseGsiQpn() {
        gsiClaimed.set(false);
    }

    @Override
    public boolean supportsGsi() {
        return true;
    }

    /** rxe_param.h RXE_MIN_SRQ_INDEX: the first SRQ number. */
    private final AtomicInteger nextSrqn = new AtomicInteger(0x20001);

    int allocateSrqn() {
        return nextSrqn.getAndIncrement();
    }

    int allocateCqn() {
        return nextCqn.getAndIncrement();
    }

    void post(final AsyncEvent event) {
        postAsyncEvent(event);
    }

    @Override
    public DeviceAttributes queryDevice() {
        return attributes.device();
    }

    @Override
    protected PortAttributes driverQueryPort(final int port) {
        return attributes.port();
    }

    @Override
    protected Gid driverQueryGid(final int port, final int index) {
        return attributes.gid(index);
    }

    @Override
    protected io.jhca.verbs.GidType driverQueryGidType(final int port, final int index) {
        return attributes.gidTable().type(index);
    }

    /**
     * The index of the local address an address vector with {@code sgidIndex} sends from: for a device on one
     * address always that one; on an interface the address of that GID entry (refused when it has none).
     */
    int sourceFor(final int sgidIndex, final String what) {
        if (config.netdev() == null || config.linkOpener() != null) {
            return 0; // one address (or a link given in code): everything leaves from it
        }
        return attributes.gidTable().sourceFor(sgidIndex, name(), what);
    }

    @Override
    protected ProtectionDomain driverAllocPd() {
        return new RxePd(this);
    }

    @Override
    protected CompletionQueue driverCreateCq(final int cqe) {
        return new RxeCq(this, allocateCqn(), cqe);
    }

    /**
     * One engine duty cycle on the calling thread. CALLER mode: the only way the device moves. THREAD mode: if no
     * other cycle runs (else 0). While a polling loop keeps calling it (two calls within 50 us) the engine thread stays
     * out of the engine, and takes over again when the calls stop or a poll returns a completion; a lone call, or
     * calls further apart, leave it alone ({@code Engine.progressFromCaller}). An empty CQ poll does the same
     * ({@link RxeDeviceConfig#POLL_PROGRESS_PROPERTY}).
     */
    @Override
    public int progress() {
        checkOpen();
        return engine.progressFromCaller();
    }

    /** CALLER mode: true, nothing moves unless the application calls {@link #progress()}. */
    @Override
    public boolean progressByCaller() {
        return runner == null;
    }

    @Override
    protected void destroy() {
        if (runner != null) {
            engine.stopSleeping(); // a sleeping engine thread would see the runner's stop only when its sleep ends
            runner.close();
        }
        // under the engine's lock (caller mode): no progress call is inside a receive on the socket while it closes
        engine.runOnEngine(link::close);
        engine.markClosed();
        if (tracer != null) {
            try {
                tracer.close();
            } catch (final IOException e) {
                // the trace is best effort
            }
        }
    }
}
