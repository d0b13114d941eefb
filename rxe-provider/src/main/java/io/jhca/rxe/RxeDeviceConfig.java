package io.jhca.rxe;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

import io.jhca.rxe.link.KernelWait;
import io.jhca.rxe.link.LinkFaults;
import io.jhca.rxe.wire.Ipv4IdMode;

/**
 * How one rxe device is set up: its name, the IP address its RoCEv2 UDP socket binds, the link (fault injection
 * per direction), who drives its engine and how the engine idles, and how received IPv4 ICRCs are checked.
 * Immutable; built with {@link #builder(String)}. Every knob is described in the package documentation.
 */
public final class RxeDeviceConfig {

    /** System property naming the devices: {@code rxe0=127.0.0.1,rxe1=if:eth0}. */
    public static final String DEVICES_PROPERTY = "jhca.rxe.devices";
    /** Environment variable with the same syntax, used when the property is absent. */
    public static final String DEVICES_ENV = "JHCA_RXE_DEVICES";
    /** System property: progress mode of configured devices, {@code thread} (default) or {@code caller}. */
    public static final String PROGRESS_PROPERTY = "jhca.rxe.progress";
    /** System property: idle strategy of engine threads: adaptive (default), busy, yield, backoff or sleep. */
    public static final String IDLE_PROPERTY = "jhca.rxe.idle";
    /** System property: IPv4 ICRC receive mode, {@code auto} (default), {@code strict} or {@code recover}. */
    public static final String ICRC_PROPERTY = "jhca.rxe.icrc";
    /**
     * System property: how long, in nanoseconds, a responder may hold an ACK back to coalesce it or let the
     * application's answer go first (default {@value #DEFAULT_ACK_HOLD_NANOS}; 0 = every ACK leaves at once).
     */
    public static final String ACK_HOLD_PROPERTY = "jhca.rxe.ackhold";
    /**
     * See {@link #ACK_HOLD_PROPERTY}: 4 us, half the shortest local ACK timeout (8.2 us). A held ACK leaves with the
     * application's answer, just before it in one system call, so a peer sees the order of a responder that acknowledges
     * at once (Linux rxe, a ConnectX) a little later; perftest's event mode (ib_send_lat -e, one completion channel for
     * both CQs) depends on that order. On loopback the two are one datagram ({@link #GSO_PROPERTY}), the answer its
     * first segment: the peer takes both at the same moment. A message that completes on a CQ armed for an event is
     * acknowledged at once: its application sleeps, so its answer is a wake-up away. A QP whose hold ended by time
     * having covered one request alone, with no request of its own sent meanwhile (a peer writes and waits, and this
     * side never answers), holds its next ACKs only to the end of the engine cycle that took their requests in, until
     * it sends a request. 0 sends every ACK at once, in a system call of its own.
     */
    public static final long DEFAULT_ACK_HOLD_NANOS = 4_000;
    /**
     * System property: {@code true} (default) or {@code false}, whether a device on a loopback address sends a held
     * ACK and the request that releases it as one UDP GSO datagram, received whole by the peer's socket (UDP_GRO) and
     * split there: one trip through the kernel's stack for both (see {@code Link#sendsCoalesced}). On loopback only,
     * where every receiver is on this host; {@code false} for captures on lo, which show such a pair as one datagram.
     */
    public static final String GSO_PROPERTY = "jhca.rxe.gso";
    /**
     * System property: {@code true} (default) or {@code false}, whether a device on an IPv4 loopback address receives
     * from a packet ring (an AF_PACKET socket's TPACKET_V2 ring with a filter on the device's address and port) instead
     * of by its UDP socket: an engine that waits for a packet reads a word in memory, not the kernel by a system call
     * each look. Needs CAP_NET_RAW and a kernel that describes a coalesced datagram to a packet socket (Linux 6.2);
     * without them the device receives by its socket, as with {@code false}. See {@code io.jhca.rxe.link.PacketRing}.
     */
    public static final String RING_PROPERTY = "jhca.rxe.ring";
    /**
     * System property: {@code true} (default) or {@code false}, whether with thread progress a poll that finds its CQ
     * empty runs a duty cycle on the polling thread when no other runs, as {@code Context.progress()} does: an
     * application that polls its CQs drives the device without knowing of {@code progress()}, and the engine thread
     * steps aside while it polls, until a poll returns a completion or the CQ is armed for an event (whose polls then
     * drive nothing). Without it an empty poll only reads the CQ. Caller progress ignores it: there only
     * {@code progress()} moves the device.
     */
    public static final String POLL_PROGRESS_PROPERTY = "jhca.rxe.pollprogress";
    /**
     * Longest ACK hold accepted, 1 ms: far below the local ACK timeout perftest and rc_pingpong arm (code 14,
     * 67 ms); a peer with a shorter timeout needs a shorter hold.
     */
    static final long MAX_ACK_HOLD_NANOS = 1_000_000;
    /** The devices when nothing is configured. */
    public static final String DEFAULT_DEVICES = "rxe0=127.0.0.1,rxe1=127.0.0.2";

    private final String name;
    private final InetAddress address;
    private final int netdevMtu;
    private final LinkFaults txFaults;
    private final LinkFaults rxFaults;
    private final long faultSeed;
    private final ProgressMode progressMode;
    private final String idleStrategy;
    /**
     * The adaptive strategy's longest park for an rxe engine: its sleep in the kernel ends at a datagram, a post or
     * its next timer, so with nothing armed a quiet device wakes once a second (a 1 ms park cost two idle devices 5%
     * of a core, a thousand wake-ups a second each).
     */
    public static final long DEFAULT_MAX_IDLE_SLEEP_NANOS = 1_000_000_000L;
    private final long minParkNanos;
    private final long maxParkNanos;
    private final Ipv4IdMode icrcMode;
    private final io.jhca.rxe.link.LinkOpener linkOpener;
    private final int socketBuffer;
    private final Path pcap;
    private final String netdev;
    private final byte[] mac;
    private final List<InetAddress> netdevAddresses;
    private final long ackHoldNanos;
    /** Added to the IPv4 Identification the ICRC of a sent packet is computed with: 0 but in some twins. */
    private final int icrcIdBias;
    private final boolean gso;
    private final boolean ring;
    private final boolean pollProgress;
    private final int maxSrqSge;

    private RxeDeviceConfig(final Builder b) {
        this.netdev = b.netdev;
        this.mac = b.mac;
        this.netdevAddresses = b.netdevAddresses;
        this.name = b.name;
        this.address = b.address;
        this.netdevMtu = b.netdevMtu;
        this.txFaults = b.txFaults;
        this.rxFaults = b.rxFaults;
        this.faultSeed = b.faultSeed;
        this.progressMode = b.progressMode;
        this.idleStrategy = b.idleStrategy;
        this.minParkNanos = b.minParkNanos;
        this.maxParkNanos = b.maxParkNanos;
        this.icrcMode = b.icrcMode;
        this.linkOpener = b.linkOpener;
        this.socketBuffer = b.socketBuffer;
        this.pcap = b.pcap;
        this.ackHoldNanos = b.ackHoldNanos;
        this.icrcIdBias = b.icrcIdBias;
        this.gso = b.gso;
        this.ring = b.ring;
        this.pollProgress = b.pollProgress;
        this.maxSrqSge = b.maxSrqSge;
    }

    /** The largest scatter list of an SRQ WQE the device reports (max_srq_sge) and takes. */
    public int maxSrqSge() {
        return maxSrqSge;
    }

    /** Whether a held ACK and its request may leave as one GSO datagram on loopback (see {@link #GSO_PROPERTY}). */
    public boolean gso() {
        return gso;
    }

    /** Whether a device on a loopback address may receive from a packet ring (see {@link #RING_PROPERTY}). */
    public boolean ring() {
        return ring;
    }

    /** Whether an empty CQ poll drives a threaded device (see {@link #POLL_PROGRESS_PROPERTY}). */
    public boolean pollProgress() {
        return pollProgress;
    }

    /** How long a responder may hold an ACK back (see {@link #ACK_HOLD_PROPERTY}); 0 = never. */
    public long ackHoldNanos() {
        return ackHoldNanos;
    }

    /**
     * Added to the IPv4 Identification with which this device computes the ICRC of the IPv4 packets it sends (whose
     * datagrams leave with ID 0): 0 but in a twin made {@link #twin(String, InetAddress, boolean) like Linux rxe}.
     */
    int icrcIdBias() {
        return icrcIdBias;
    }

    public static Builder builder(final String name) {
        return new Builder(name);
    }

    /**
     * A device named {@code name} at {@code at} that moves packets as this one does: the same progress mode, idle
     * strategy, ICRC mode, ACK hold, socket buffer, packet ring, poll progress and max_srq_sge, and coalesced pairs only if this
     * device sends them (on loopback). Without this one's faults, capture or interface. For a private twin of a
     * device, e.g. one that warms the JIT up on the code paths this device's traffic takes.
     */
    public RxeDeviceConfig twin(final String name, final InetAddress at) {
        return twin(name, at, false);
    }

    /**
     * A {@link #twin(String, InetAddress) twin} that, if {@code likeLinuxRxe}, computes the ICRC of its IPv4 packets as
     * if their Identification were {@value #TWIN_ICRC_ID_BIAS} more than the one they leave with (0, as every jhca
     * packet), as Linux rxe's packets carry IDs other than 0: its peer's receiver then solves for the ID
     * ({@link io.jhca.rxe.wire.Ipv4IdMode#AUTO}), a path packets from jhca never take. Not in the STRICT_ID_ZERO ICRC
     * mode, which accepts no such packet.
     */
    public RxeDeviceConfig twin(final String name, final InetAddress at, final boolean likeLinuxRxe) {
        return builder(name).address(at).progressMode(progressMode).idleStrategy(idleStrategy)
                .idlePark(minParkNanos, maxParkNanos).icrcMode(icrcMode).socketBuffer(socketBuffer)
                .ackHoldNanos(ackHoldNanos).gso(gso && address != null && address.isLoopbackAddress())
                .ring(ring).pollProgress(pollProgress).maxSrqSge(maxSrqSge)
                .icrcIdBias(likeLinuxRxe && icrcMode != Ipv4IdMode.STRICT_ID_ZERO ? TWIN_ICRC_ID_BIAS : 0).build();
    }

    /** What a twin {@code likeLinuxRxe} adds to the IPv4 Identification of its ICRCs: any ID but 0 would do. */
    static final int TWIN_ICRC_ID_BIAS = 0x4a1d;

    public String name() {
        return name;
    }

    public InetAddress address() {
        return address;
    }

    /**
     * The MTU of the network device the address lives on (for the port's active MTU): as configured, else the
     * interface's MTU, else 65536 for a loopback address (Linux lo), else 1500.
     */
    public int netdevMtu() {
        if (netdevMtu > 0) {
            return netdevMtu;
        }
        try {
            final NetworkInterface nif = NetworkInterface.getByInetAddress(address);
            if (nif != null && nif.getMTU() > 0) {
                return nif.getMTU();
            }
        } catch (final SocketException e) {
            // fall through to the defaults
        }
        return address.isLoopbackAddress() ? 65536 : 1500;
    }

    public LinkFaults txFaults() {
        return txFaults;
    }

    public LinkFaults rxFaults() {
        return rxFaults;
    }

    public long faultSeed() {
        return faultSeed;
    }

    public boolean hasFaults() {
        return !txFaults.isNone() || !rxFaults.isNone();
    }

    public ProgressMode progressMode() {
        return progressMode;
    }

    public String idleStrategyName() {
        return idleStrategy;
    }

    /** A fresh idle strategy of the configured kind. */
    public IdleStrategy newIdleStrategy() {
        return newIdleStrategy(nanos -> AdaptiveIdleStrategy.PARK.sleep(Math.min(nanos, KernelWait.PARK_CAP_NANOS)));
    }

    /** A fresh idle strategy of the configured kind; the adaptive one parks with {@code sleeper}. */
    public IdleStrategy newIdleStrategy(final AdaptiveIdleStrategy.Sleeper sleeper) {
        switch (idleStrategy) {
            case "busy":
                return new BusySpinIdleStrategy();
            case "yield":
                return new YieldingIdleStrategy();
            case "sleep":
                return new SleepingIdleStrategy(100_000L);
            case "backoff": // spin 100 times, yield 200 times, then park from 1 us up to 100 us
                return new BackoffIdleStrategy(100, 200, 1_000L, 100_000L);
            default:
                return new AdaptiveIdleStrategy(AdaptiveIdleStrategy.DEFAULT_SPIN_NANOS,
                        AdaptiveIdleStrategy.DEFAULT_YIELD_NANOS, minParkNanos, maxParkNanos, sleeper);
        }
    }

    public Ipv4IdMode icrcMode() {
        return icrcMode;
    }

    /** How the device's link is opened: null for a UDP socket on {@code <address>:4791}. */
    public io.jhca.rxe.link.LinkOpener linkOpener() {
        return linkOpener;
    }

    public int socketBuffer() {
        return socketBuffer;
    }

    /** Where to write a pcap trace of every packet, or null. */
    public Path pcap() {
        return pcap;
    }

    /** The network interface the device sits on (as {@code rdma link add NAME type rxe netdev IFACE}), or null. */
    public String netdev() {
        return netdev;
    }

    /**
     * The MAC the device's identity (node GUID, default GID) derives from: its interface's, else one made from its
     * address (a locally administered 02:00:a:b:c:d, since a bare address has none). A copy.
     */
    public byte[] mac() {
        return mac != null ? mac.clone() : RxeDeviceAttributes.macOf(address);
    }

    /** The interface's addresses when the device was configured (empty for a device on one address). */
    public List<InetAddress> netdevAddresses() {
        return netdevAddresses;
    }

    /**
     * The port's GID table: Linux's layout over every address of the interface for a device on one, else jhca's
     * two entries (see {@link RxeGidTable}).
     */
    public RxeGidTable gidTable() {
        final long guid = RxeDeviceAttributes.guidOf(mac());
        return netdev != null ? RxeGidTable.forNetdev(guid, netdevAddresses) : RxeGidTable.single(guid, address);
    }

    @Override
    public String toString() {
        return name + "=" + (netdev != null ? "if:" + netdev + " " : "") + address.getHostAddress() + " (" + progressMode + ", idle " + idleStrategy + ", icrc "
                + icrcMode + (hasFaults() ? ", faults tx " + txFaults + " rx " + rxFaults : "") + ")";
    }

    // ------------------------------------------------------------------------------------------ configuration

    /**
     * The configured devices: those of the system property {@value #DEVICES_PROPERTY}, else of the environment
     * variable {@value #DEVICES_ENV}, else {@value #DEFAULT_DEVICES}; then the devices of the user's link file
     * ({@link RxeLinks}, {@code hwlab link add}) whose names those do not take; progress, idle and ICRC settings from
     * their properties. A file device whose interface is gone or has no address is left out, with a warning.
     */
    public static List<RxeDeviceConfig> fromEnvironment() {
        final List<RxeDeviceConfig> out = new ArrayList<>(configured());
        final java.util.Set<String> names = new java.util.HashSet<>();
        out.forEach(c -> names.add(c.name()));
        final RxeLinks links = RxeLinks.fromEnvironment();
        for (final RxeLinks.Link l : links.read()) {
            if (!names.add(l.name())) {
                continue; // the property, the environment or the defaults win
            }
            try {
                out.add(settings(builder(l.name()).networkInterface(l.netdev())).build());
            } catch (final IllegalArgumentException e) {
                if (WARNED.add(l.name() + " " + e.getMessage())) {
                    System.err.println("jhca rxe: device " + l.name() + " of " + links.file() + " left out: "
                            + e.getMessage() + " (hwlab link delete " + l.name() + " removes it)");
                }
            }
        }
        return Collections.unmodifiableList(out);
    }

    /** What is warned about once per JVM. */
    private static final java.util.Set<String> WARNED = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * The devices of the system property {@value #DEVICES_PROPERTY}, else of the environment variable
     * {@value #DEVICES_ENV}, else {@value #DEFAULT_DEVICES} (without the link file's).
     */
    public static List<RxeDeviceConfig> configured() {
        String spec = System.getProperty(DEVICES_PROPERTY);
        if (spec == null || spec.isBlank()) {
            spec = System.getenv(DEVICES_ENV);
        }
        if (spec == null || spec.isBlank()) {
            spec = DEFAULT_DEVICES;
        }
        final List<RxeDeviceConfig> out = new ArrayList<>();
        for (final Builder b : parse(spec)) {
            out.add(settings(b).build());
        }
        return Collections.unmodifiableList(out);
    }

    /** Progress, idle, ICRC, ACK-hold, GSO, ring and poll-progress settings from their properties. */
    private static Builder settings(final Builder b) {
        final ProgressMode progress = ProgressMode.valueOf(
                System.getProperty(PROGRESS_PROPERTY, "thread").trim().toUpperCase(Locale.ROOT));
        final String idle = System.getProperty(IDLE_PROPERTY, "adaptive").trim().toLowerCase(Locale.ROOT);
        final String icrc = System.getProperty(ICRC_PROPERTY, "auto").trim().toLowerCase(Locale.ROOT);
        final long ackHold = parseAckHold(System.getProperty(ACK_HOLD_PROPERTY, Long.toString(DEFAULT_ACK_HOLD_NANOS)));
        final boolean gso = parseBoolean(GSO_PROPERTY, System.getProperty(GSO_PROPERTY, "true"));
        final boolean ring = parseBoolean(RING_PROPERTY, System.getProperty(RING_PROPERTY, "true"));
        final boolean pollProgress = parseBoolean(POLL_PROGRESS_PROPERTY,
                System.getProperty(POLL_PROGRESS_PROPERTY, "true"));
        return b.progressMode(progress).idleStrategy(idle).icrcMode(parseIcrc(icrc)).ackHoldNanos(ackHold).gso(gso)
                .ring(ring).pollProgress(pollProgress);
    }

    private static boolean parseBoolean(final String property, final String s) {
        switch (s.trim().toLowerCase(Locale.ROOT)) {
            case "true":
                return true;
            case "false":
                return false;
            default:
                throw new IllegalArgumentException(property + " must be true or false, not '" + s + "'");
        }
    }

    private static long parseAckHold(final String s) {
        try {
            return Long.parseLong(s.trim());
        } catch (final NumberFormatException e) {
            throw new IllegalArgumentException(ACK_HOLD_PROPERTY + " must be a number of nanoseconds, not '" + s + "'");
        }
    }

    private static Ipv4IdMode parseIcrc(final String s) {
        switch (s) {
            case "auto":
                return Ipv4IdMode.AUTO;
            case "strict":
                return Ipv4IdMode.STRICT_ID_ZERO;
            case "recover":
                return Ipv4IdMode.RECOVER_ID;
            default:
                throw new IllegalArgumentException(ICRC_PROPERTY + " must be auto, strict or recover, not '" + s + "'");
        }
    }

    /** Parses {@code name=address} and {@code name=if:<interface>} items separated by commas. */
    public static List<Builder> parse(final String spec) {
        final List<Builder> out = new ArrayList<>();
        for (final String item : spec.split(",")) {
            final String it = item.trim();
            if (it.isEmpty()) {
                continue;
            }
            final int eq = it.indexOf('=');
            if (eq <= 0 || eq == it.length() - 1) {
                throw new IllegalArgumentException("rxe device '" + it + "' is not name=address or name=if:<interface>");
            }
            final String name = it.substring(0, eq).trim();
            final String where = it.substring(eq + 1).trim();
            final Builder b = builder(name);
            if (where.startsWith("if:")) {
                b.networkInterface(where.substring(3));
            } else {
                b.address(literal(where));
            }
            out.add(b);
        }
        return out;
    }

    private static InetAddress literal(final String s) {
        final String t = s.startsWith("[") && s.endsWith("]") ? s.substring(1, s.length() - 1) : s;
        if (!t.matches("[0-9.]+") && !t.contains(":")) {
            throw new IllegalArgumentException("'" + s + "' is not an IPv4 or IPv6 literal");
        }
        try {
            return InetAddress.getByName(t); // a literal: no name lookup
        } catch (final UnknownHostException e) {
            throw new IllegalArgumentException("'" + s + "' is not an IP address", e);
        }
    }

    /** Builder; {@link #address} or {@link #networkInterface} is required. */
    public static final class Builder {
        private final String name;
        private InetAddress address;
        private int netdevMtu;
        private LinkFaults txFaults = LinkFaults.NONE;
        private LinkFaults rxFaults = LinkFaults.NONE;
        private long faultSeed = 1;
        private ProgressMode progressMode = ProgressMode.THREAD;
        private String idleStrategy = "adaptive";
        private long minParkNanos = AdaptiveIdleStrategy.DEFAULT_MIN_PARK_NANOS;
        private long maxParkNanos = DEFAULT_MAX_IDLE_SLEEP_NANOS;
        private Ipv4IdMode icrcMode = Ipv4IdMode.AUTO;
        private int socketBuffer = io.jhca.rxe.link.UdpLink.DEFAULT_SOCKET_BUFFER;
        private Path pcap;
        private io.jhca.rxe.link.LinkOpener linkOpener;
        private String netdev;
        private byte[] mac;
        private List<InetAddress> netdevAddresses = List.of();
        private long ackHoldNanos = DEFAULT_ACK_HOLD_NANOS;
        private int icrcIdBias;
        private boolean gso = true;
        private boolean ring = true;
        private boolean pollProgress = true;
        private int maxSrqSge = RxeDeviceAttributes.MAX_SRQ_SGE;

        private Builder(final String name) {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("an rxe device needs a name");
            }
            this.name = name;
        }

        public Builder address(final InetAddress a) {
            this.address = Objects.requireNonNull(a);
            return this;
        }

        public Builder address(final String literal) {
            return address(literal(literal));
        }

        /**
         * A device on network interface {@code ifName}, as {@code rdma link add NAME type rxe netdev IFACE}: its MAC,
         * its MTU and every IP address it has now (IPv4 and IPv6, link-local ones with their scope) are read; the
         * device receives on all of them and its GID table lists them (see {@link RxeGidTable}).
         */
        public Builder networkInterface(final String ifName) {
            try {
                final NetworkInterface nif = NetworkInterface.getByName(ifName);
                if (nif == null) {
                    throw new IllegalArgumentException("no network interface named '" + ifName + "'"
                            + " (ip link shows the interfaces of this network namespace)");
                }
                final byte[] hw = nif.getHardwareAddress();
                final byte[] m = hw != null && hw.length == 6 ? hw : new byte[6]; // Linux lo: 00:00:00:00:00:00
                return netdev(ifName, m, nif.getMTU(), Collections.list(nif.getInetAddresses()));
            } catch (final SocketException e) {
                throw new IllegalArgumentException("cannot read network interface '" + ifName + "': " + e, e);
            }
        }

        /**
         * A device on interface {@code ifName} with this MAC, MTU and these addresses (what
         * {@link #networkInterface} reads from the system; given directly for tests). The device's address (for
         * its identity in messages) is the first IPv4 address, else the first IPv6 one that is not link-local,
         * else the first.
         */
        public Builder netdev(final String ifName, final byte[] hwAddress, final int mtu,
                final List<InetAddress> addresses) {
            if (hwAddress.length != 6) {
                throw new IllegalArgumentException("a MAC has 6 bytes, not " + hwAddress.length);
            }
            if (addresses.isEmpty()) {
                throw new IllegalArgumentException("network interface '" + ifName + "' has no IP address: give it"
                        + " one (ip address add ADDR/LEN dev " + ifName + ")");
            }
            InetAddress primary = null;
            for (final InetAddress a : addresses) {
                if (a instanceof Inet4Address) {
                    primary = a;
                    break;
                }
            }
            for (final InetAddress a : addresses) {
                if (primary == null && a instanceof Inet6Address && !a.isLinkLocalAddress()) {
                    primary = a;
                }
            }
            this.address = primary != null ? primary : addresses.get(0);
            this.netdev = ifName;
            this.mac = hwAddress.clone();
            this.netdevAddresses = List.copyOf(addresses);
            if (netdevMtu == 0 && mtu > 0) {
                netdevMtu = mtu;
            }
            return this;
        }

        /** The netdev MTU the port's active MTU is derived from (rxe: largest IB MTU within MTU - 80). */
        public Builder netdevMtu(final int mtu) {
            this.netdevMtu = mtu;
            return this;
        }

        /** Fault injection on sent packets. */
        public Builder txFaults(final LinkFaults f) {
            this.txFaults = Objects.requireNonNull(f);
            return this;
        }

        /** Fault injection on received packets. */
        public Builder rxFaults(final LinkFaults f) {
            this.rxFaults = Objects.requireNonNull(f);
            return this;
        }

        public Builder faultSeed(final long seed) {
            this.faultSeed = seed;
            return this;
        }

        public Builder progressMode(final ProgressMode m) {
            this.progressMode = Objects.requireNonNull(m);
            return this;
        }

        /** busy, yield, backoff or sleep. */
        public Builder idleStrategy(final String s) {
            final String v = s.trim().toLowerCase(Locale.ROOT);
            if (!v.equals("busy") && !v.equals("yield") && !v.equals("backoff") && !v.equals("sleep") && !v.equals("adaptive")) {
                throw new IllegalArgumentException("idle strategy must be adaptive, busy, yield, backoff or sleep, not '" + s + "'");
            }
            this.idleStrategy = v;
            return this;
        }

        /**
         * The adaptive idle strategy's park: the first one, doubling up to the longest (defaults 50 us and
         * {@link #DEFAULT_MAX_IDLE_SLEEP_NANOS}). A quiet engine thread sleeps on its sockets, so a datagram, a post
         * or its next timer (retransmission, RNR wait, held ACK) wakes it whatever these are; they only bound how
         * often a quiet device wakes to look. Where nothing can end a park early it lasts at most 1 ms.
         */
        public Builder idlePark(final long minNanos, final long maxNanos) {
            if (minNanos <= 0 || maxNanos < minNanos) {
                throw new IllegalArgumentException("idle park: need 0 < min (" + minNanos + ") <= max (" + maxNanos + ")");
            }
            this.minParkNanos = minNanos;
            this.maxParkNanos = maxNanos;
            return this;
        }

        public Builder icrcMode(final Ipv4IdMode m) {
            this.icrcMode = Objects.requireNonNull(m);
            return this;
        }

        /** Bytes asked for SO_RCVBUF and SO_SNDBUF of the UDP socket. */
        public Builder socketBuffer(final int bytes) {
            this.socketBuffer = bytes;
            return this;
        }

        /** Trace every packet sent and received to this pcap file. */
        public Builder pcap(final Path file) {
            this.pcap = file;
            return this;
        }

        /** See {@link RxeDeviceConfig#icrcIdBias()}: for twins only, so not public. */
        Builder icrcIdBias(final int bias) {
            this.icrcIdBias = bias & 0xFFFF;
            return this;
        }

        /**
         * How long a responder may hold an ACK back, 0 .. {@value #MAX_ACK_HOLD_NANOS} ns (see
         * {@link #ACK_HOLD_PROPERTY}); 0 sends every ACK at once.
         */
        public Builder ackHoldNanos(final long nanos) {
            if (nanos < 0 || nanos > MAX_ACK_HOLD_NANOS) {
                throw new IllegalArgumentException("rxe device " + name + ": ACK hold " + nanos + " ns is not in 0.."
                        + MAX_ACK_HOLD_NANOS + " (it must stay far below the peer's retransmit timer)");
            }
            this.ackHoldNanos = nanos;
            return this;
        }

        /** Whether a held ACK and its request may leave as one GSO datagram on loopback (see {@link #GSO_PROPERTY}). */
        public Builder gso(final boolean on) {
            this.gso = on;
            return this;
        }

        /** Whether a device on a loopback address may receive from a packet ring (see {@link #RING_PROPERTY}). */
        public Builder ring(final boolean on) {
            this.ring = on;
            return this;
        }

        /** Whether an empty CQ poll drives a threaded device (see {@link #POLL_PROGRESS_PROPERTY}). */
        public Builder pollProgress(final boolean on) {
            this.pollProgress = on;
            return this;
        }

        /**
         * The largest scatter list of an SRQ WQE, 1..{@value RxeDeviceAttributes#MAX_SGE} (rxe_param.h RXE_MAX_SGE):
         * default {@value RxeDeviceAttributes#MAX_SRQ_SGE}, Linux rxe's RXE_MAX_SRQ_SGE. For a device that must take
         * longer ones, as one backing a ConnectX model's SRQs (31 SGEs in a 512-byte WQE).
         */
        public Builder maxSrqSge(final int sges) {
            if (sges < 1 || sges > RxeDeviceAttributes.MAX_SGE) {
                throw new IllegalArgumentException("rxe device " + name + ": max_srq_sge " + sges + " is not in 1.."
                        + RxeDeviceAttributes.MAX_SGE);
            }
            this.maxSrqSge = sges;
            return this;
        }

        /** Opens the device's link with this instead of a UDP socket (the socket buffer size is then unused). */
        public Builder link(final io.jhca.rxe.link.LinkOpener opener) {
            this.linkOpener = Objects.requireNonNull(opener);
            return this;
        }

        public RxeDeviceConfig build() {
            if (address == null) {
                throw new IllegalArgumentException("rxe device " + name + " has no address");
            }
            return new RxeDeviceConfig(this);
        }
    }
}
