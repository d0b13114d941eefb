package io.jhca.rxe.transport;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntConsumer;

import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.rxe.link.Link;
import io.jhca.rxe.link.LinkSleep;
import io.jhca.rxe.link.RxBatch;
import io.jhca.rxe.wire.Ipv4IdMode;
import io.jhca.rxe.wire.Opcode;
import io.jhca.rxe.wire.PacketValidator;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QpType;

/**
 * The progress engine of one software device, an Agrona {@link Agent}: each duty cycle it runs queued control
 * commands, lets every QP fire its timers, continue a READ reply and send (up to {@link #TX_BUDGET} packets each),
 * receives up to {@link #RX_BUDGET} packets from the link (validated, ICRC checked, dispatched to the responder or
 * completer of their QP), then lets every QP send again. It runs on its own thread (an AgentRunner) or from the application's polling
 * loop ({@code Context.progress()}).
 *
 * <p>Every transport structure is touched under the engine's lock only: by a duty cycle (the engine thread's, or an
 * application's progress call) or a control action. Applications reach it through the send/receive rings
 * (release/acquire indices) and through {@link #runOnEngine}, which runs a control action (QP create, modify,
 * destroy, MR deregistration) between two cycles and waits for it, so no action ever races a copy.
 *
 * <p>Received packets are checked in rxe_recv.c's spirit: length, opcode, TVer, P_Key and ICRC (by the wire
 * {@link PacketValidator}), destination QP (0 and unknown QPNs dropped), QP type against the opcode's transport,
 * QP state, and for RC/UC the source address against the QP's destination; UD Q_Keys are checked by the
 * responder. Each drop is counted by reason in {@link RxeCounters}; nothing stops the engine.
 *
 * <p>Receive-side ICRC: a UDP socket does not show the IP header, so the covered fields are reconstructed from
 * what is known: source address and port from the datagram, our own address, lengths from the UDP payload, DF,
 * protocol 17; the IPv4 Identification is checked as 0 first (what jhca sends, all 32 bits) and, unless the mode
 * is {@link Ipv4IdMode#STRICT_ID_ZERO}, solved for otherwise (peers such as Linux rxe send non-zero IDs).
 */
public final class Engine implements Agent {

    public static final int RX_BUDGET = 64;
    public static final int TX_BUDGET = 32;
    /** Multicast limits (rxe_param.h), as ibv_query_device reports them. */
    public static final int MAX_MCAST_GROUPS = McastTable.MAX_GROUPS;
    public static final int MAX_MCAST_QP_ATTACH = McastTable.MAX_QP_ATTACH;
    public static final int MAX_TOTAL_MCAST_QP_ATTACH = McastTable.MAX_TOTAL_QP_ATTACH;
    /** Receive buffer: larger than any valid packet, so a full buffer means an oversize (truncated) datagram. */
    static final int RX_CAPACITY = 16 * 1024;

    final RxeCounters counters;
    final MrTable mrs;
    final MemoryAccess memory;
    final PacketOut out;
    /** The first of {@link #locals}: the device's address (single-address devices have only this one). */
    final Peer local;
    /** Every local address of the link, by the index the link reports a packet arrived at. */
    final Peer[] locals;
    final int portMtu;
    private final Link link;
    private final String name;
    private final Ipv4IdMode icrcMode;
    private final PacketValidator validator = new PacketValidator();
    /**
     * Unicast datagrams, received {@link #RX_BUDGET} at most at a time; multicast ones one at a time into its first
     * slot once the unicast ones are handled. {@link #rx} views the one being handled.
     */
    private final RxBatch rxBatch = new RxBatch(RX_BUDGET, RX_CAPACITY);
    private final UnsafeBuffer rx = new UnsafeBuffer(rxBatch.slotAddress(0), RX_CAPACITY);
    private final RxPacket packet = new RxPacket();
    private final Int2ObjectHashMap<TransportQp> byQpn = new Int2ObjectHashMap<>();
    private TransportQp[] qps = new TransportQp[16];
    private int qpCount;
    /** The QP a transmit pass starts with: each pass starts one later, so no QP is always last to the room. */
    private int firstToTransmit;
    /**
     * RC PSNs this device's requesters may still send in the current transmit pass ({@link #psnRoom()}), or
     * {@link #ROOM_UNSUMMED} until a requester of the pass first asks. Engine thread only.
     */
    private int psnRoom;
    private static final int ROOM_UNSUMMED = Integer.MIN_VALUE;
    private final ManyToOneConcurrentArrayQueue<Command> commands = new ManyToOneConcurrentArrayQueue<>(1024);
    private final boolean threaded;
    /**
     * Held by every duty cycle, the engine thread's and an application's progress call alike, and by a control action
     * run outside the engine thread, so a deregistration (or QP destroy) never runs while a cycle copies registered
     * memory, and two cycles never overlap.
     */
    private final ReentrantLock cycleLock = new ReentrantLock();
    /**
     * THREAD mode: when an application's polling loop last ran a duty cycle by a progress call (System.nanoTime):
     * a call within {@link #CALLER_LOOP_NANOS} of the one before. For {@link #CALLER_WINDOW_NANOS} after it the engine
     * thread leaves the engine to the application (see {@link #progressFromCaller}). Written opaque by the caller's
     * cycle, read opaque by the engine thread; {@link #NOT_DRIVEN} while no loop drives (never did, stopped, or a poll
     * returned the completion it waited for: {@link #loopEnded}, a volatile store).
     */
    private long callerCycleNanos = NOT_DRIVEN;
    /** {@link #callerCycleNanos} when no polling loop drives the engine: the engine thread reads no clock for it. */
    private static final long NOT_DRIVEN = Long.MIN_VALUE;
    /** THREAD mode: when the last progress call's cycle ran, loop or not; under the lock. */
    private long lastCallCycleNanos = System.nanoTime() - 2 * CALLER_WINDOW_NANOS;
    /**
     * THREAD mode: two progress calls' cycles this close together are a polling loop, which the engine thread makes
     * way for. A lone call, or calls further apart (a housekeeping timer), leave the engine thread alone: it would
     * otherwise park a millisecond after each and leave the device to calls that come rarely.
     */
    static final long CALLER_LOOP_NANOS = java.util.concurrent.TimeUnit.MICROSECONDS.toNanos(50);
    private static final VarHandle CALLER_CYCLE_NANOS;
    /**
     * THREAD mode: how long after an application's progress call the engine thread stays out of the engine: the
     * application that keeps calling drives it, as in CALLER mode, and the engine thread takes no core from it. The
     * same quiet time after which {@link HeldAckWatch} takes a caller-progress engine whose application stopped.
     */
    static final long CALLER_WINDOW_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(1);
    /** The engine thread's longest park while an application drives the engine (its first is the window, 1 ms). */
    static final long CALLER_PARK_MAX_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(16);
    /** The engine thread's current park while an application drives the engine; engine thread only. */
    private long callerParkNanos = CALLER_WINDOW_NANOS;
    /** The engine thread while it parks for a polling loop, else null: {@link #loopEnded} wakes it. */
    private volatile Thread parkedForCaller;
    /**
     * For a device model embedding this engine: asked, with the QPN, when a packet needs a receive WQE and none
     * is posted, so the model can read its receive queue's doorbell record first, as hardware does when a
     * packet arrives. Null for ordinary devices. Runs on the engine's thread.
     */
    private volatile IntConsumer emptyRecvQueueListener;
    private volatile Thread thread;
    private volatile boolean closed;
    private volatile Throwable lastError;
    private InetSocketAddress lastSource;
    private Peer lastPeer;
    private Tracer tracer;
    private final McastTable mcast;
    /**
     * System.nanoTime at the start of the current duty cycle. Written (opaque) by the cycle's thread; read by that
     * thread plainly and, opaque, by {@link HeldAckWatch}'s, which must not take the engine from an application that
     * is driving it.
     */
    private long cycleNanos;
    private static final VarHandle CYCLE_NANOS;

    static {
        try {
            CYCLE_NANOS = MethodHandles.lookup().findVarHandle(Engine.class, "cycleNanos", long.class);
            CALLER_CYCLE_NANOS = MethodHandles.lookup().findVarHandle(Engine.class, "callerCycleNanos", long.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
    private volatile long ackHoldNanos = io.jhca.rxe.RxeDeviceConfig.DEFAULT_ACK_HOLD_NANOS;
    /** Where the engine thread sleeps when idle, and the handshake that lets a post wake it. */
    private final LinkSleep sleep;
    /** CALLER mode: sends held ACKs whose time is past when the application makes no progress calls; else null. */
    private final HeldAckWatch heldAckWatch;
    /** Whether this engine is on {@link #heldAckWatch}'s list (from its first hold; engine or caller thread only). */
    private boolean watched;

    /**
     * @param threaded true if an AgentRunner will run this engine; false for the caller's own progress loop
     * @param portMtu  the port's active MTU in bytes (UD messages longer than it are not sent, as in rxe)
     */
    public Engine(final String name, final Link link, final Ipv4IdMode icrcMode, final int portMtu,
            final boolean threaded, final MrTable mrs, final RxeCounters counters) {
        this.name = name;
        this.link = link;
        this.icrcMode = icrcMode;
        this.portMtu = portMtu;
        this.threaded = threaded;
        this.mrs = mrs;
        this.counters = counters;
        this.memory = new MemoryAccess(mrs);
        final java.util.List<InetSocketAddress> addresses = link.localAddresses();
        this.locals = new Peer[addresses.size()];
        for (int i = 0; i < locals.length; i++) {
            locals[i] = new Peer(addresses.get(i));
        }
        this.local = locals[0];
        this.out = new PacketOut(link, locals, counters);
        this.mcast = new McastTable(link);
        this.sleep = new LinkSleep(() -> link, this::lastLook, this::timerToSleepFor, LinkSleep::fullFence);
        this.heldAckWatch = threaded ? null : HeldAckWatch.SHARED;
    }

    /** Records every packet sent and received to a pcap file (debugging); set before the engine starts. */
    public void tracer(final Tracer t) {
        tracer = t;
        out.tracer(t);
    }

    public Peer local() {
        return local;
    }

    /** The local address at {@code index} of the link's addresses. */
    public Peer local(final int index) {
        return locals[index];
    }

    /** How many local addresses the link has. */
    public int localCount() {
        return locals.length;
    }

    public RxeCounters counters() {
        return counters;
    }

    /**
     * Adds {@code bias} to the IPv4 Identification this engine computes the ICRC of its sent IPv4 packets with (they
     * leave with ID 0): 0 but in a twin that stands in for Linux rxe's non-zero IDs (RxeDeviceConfig.twin). Before the
     * engine runs.
     */
    public void icrcIdBias(final int bias) {
        out.icrcIdBias(bias);
    }

    /** How long a responder may hold an ACK back (coalesced acknowledges); 0 = never. Set before traffic starts. */
    public void ackHoldNanos(final long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("ACK hold " + nanos + " ns < 0");
        }
        ackHoldNanos = nanos;
    }

    long ackHoldNanos() {
        return ackHoldNanos;
    }

    /** The time (System.nanoTime) the current duty cycle started; engine thread only. */
    long cycleNanos() {
        return cycleNanos;
    }

    /** When the latest duty cycle started, as another thread sees it (CALLER mode: the application's last progress call). */
    long lastCycleNanos() {
        return (long) CYCLE_NANOS.getOpaque(this);
    }

    /** The last unexpected exception the engine caught (a bug if not null), for tests and tools. */
    public Throwable lastError() {
        return lastError;
    }

    @Override
    public String roleName() {
        return "jhca-rxe-" + name;
    }

    @Override
    public void onStart() {
        thread = Thread.currentThread();
    }

    @Override
    public void onClose() {
        closed = true;
        cycleLock.lock();   // the commands' queue has one consumer at a time: whoever holds the lock
        try {
            drainCommands();
        } finally {
            cycleLock.unlock();
        }
        sleep.close();
    }

    /**
     * The park of the engine thread's idle strategy: one more duty cycle, and if that finds nothing, a sleep in the
     * kernel until a datagram arrives on the link, a post wakes it ({@link #notifyPosted}), the next timer is due
     * (retransmission, the end of an RNR wait, a held ACK, a packet the link held back) or {@code nanos} pass. With no
     * timer armed the sleep's length is only how often a quiet device looks (the default park grows to 1 s), so an
     * idle device costs next to nothing, and a timer fires on time rather than at the end of a park. The duty cycle
     * after raising the sleep's flag is what makes the handshake with a posting thread safe ({@link LinkSleep}): a WR
     * published before that thread saw the flag is found by it, one published after makes that thread wake the
     * sleep. Returns true if the duty cycle found work (the engine does not sleep then).
     */
    public boolean sleep(final long nanos) {
        return sleep.sleep(nanos);
    }

    /**
     * Nanoseconds from {@code now} until a QP's or the link's next timer is due, Long.MAX_VALUE if none. Engine
     * thread only (a caller-progress engine: the thread that drives it, e.g. a device model's firmware thread).
     */
    public long nanosToNextTimer(final long now) {
        long next = link.nanosToNextRelease(now);
        for (int i = 0; i < qpCount; i++) {
            next = Math.min(next, qps[i].nanosToNextTimer(now));
        }
        return next;
    }

    /**
     * Called by the application after it published WRs (a doorbell) or queued a command: wakes the engine thread if
     * it sleeps in the kernel. Costs a fence and a read while the engine is awake, a write(2) only when it sleeps.
     * Nothing in CALLER mode, where the application's own progress calls move the WRs.
     */
    public void notifyPosted() {
        if (!threaded) {
            return;
        }
        sleep.wake(); // the ring's publish, a full fence, then the read of the flag (Dekker with sleep)
    }

    /** The link this engine sends and receives on: where a thread that drives it can wait for datagrams. */
    public Link link() {
        return link;
    }

    /** True while the engine thread sleeps in the kernel (or is about to): tests, diagnostics. */
    public boolean asleep() {
        return sleep.asleep();
    }

    /** The device is closing: ends the engine thread's sleep, and it sleeps no more (its runner then stops it). */
    public void stopSleeping() {
        sleep.stop();
    }

    /** How many times the engine thread slept in the kernel, and how many of those a datagram or a post cut short. */
    public long[] sleepCounts() {
        return sleep.counts();
    }

    /** The device is going away: from now on control actions run on the caller's thread. */
    public void markClosed() {
        closed = true;
        if (heldAckWatch != null) {
            heldAckWatch.remove(this);
        }
    }

    boolean isClosed() {
        return closed;
    }

    /** A responder started to hold an ACK in the current cycle (engine thread, or the caller's under the lock). */
    void ackHeld() {
        if (heldAckWatch != null) {
            if (!watched && !closed) {
                watched = true;
                heldAckWatch.add(this);
            }
            heldAckWatch.held(cycleNanos);
        }
    }

    /**
     * CALLER mode, from {@link HeldAckWatch}'s thread: sends every held ACK whose time is past, if no progress call is
     * running (one that is releases them itself). Returns how many QPs had one.
     */
    int releaseDueHeldAcks(final long now) {
        if (!cycleLock.tryLock()) {
            return 0;
        }
        int released = 0;
        try {
            if (closed) {
                return 0;
            }
            for (int i = 0; i < qpCount; i++) {
                final TransportQp qp = qps[i];
                try {
                    if (qp.releaseHeldAckIfDue(now)) {
                        released++;
                        qp.count(RxeCounters.Counter.ACKS_SENT_BY_WATCH);
                    }
                } catch (final RuntimeException e) {
                    engineError(e);
                }
            }
            return released;
        } finally {
            cycleLock.unlock();
        }
    }

    /** See {@link #emptyRecvQueueListener}; set it before traffic starts. */
    public void onEmptyReceiveQueue(final IntConsumer listener) {
        this.emptyRecvQueueListener = listener;
    }

    /** Lets the embedding model refill {@code qpn}'s receive queue; true if a listener ran. */
    boolean refillReceiveQueue(final int qpn) {
        final IntConsumer l = emptyRecvQueueListener;
        if (l == null) {
            return false;
        }
        l.accept(qpn);
        return true;
    }

    /**
     * A duty cycle: the AgentRunner's call on the engine thread (THREAD mode), or the application's progress call
     * (CALLER mode).
     */
    @Override
    public int doWork() {
        if (threaded) {
            return engineThreadCycle();
        }
        cycleLock.lock();
        try {
            return dutyCycle();
        } finally {
            cycleLock.unlock();
        }
    }

    /**
     * THREAD mode, an application's progress call: a duty cycle on the calling thread if no other cycle runs, as in
     * CALLER mode. While such calls come the engine thread stays out ({@link #CALLER_WINDOW_NANOS}), so an application
     * that polls and calls progress gets caller progress's latency without giving up the engine thread, which takes
     * over again when the calls stop. Returns the cycle's work, 0 if another cycle was running.
     */
    public int progressFromCaller() {
        if (!threaded) {
            return doWork();
        }
        if (!cycleLock.tryLock()) {
            return 0;
        }
        try {
            final int work = dutyCycle();
            final long t = cycleNanos;
            if (t - lastCallCycleNanos < CALLER_LOOP_NANOS) {
                CALLER_CYCLE_NANOS.setOpaque(this, t);
            }
            lastCallCycleNanos = t;
            return work;
        } finally {
            cycleLock.unlock();
        }
    }

    /**
     * THREAD mode, an application's poll that found its CQ empty: {@link #progressFromCaller}, so an application that
     * polls its CQs drives the engine without knowing of progress calls. Not on a closed engine, nor on a thread inside
     * a cycle already (the lock is reentrant). CALLER mode: 0, only progress calls move the device there.
     */
    public int progressFromPoll() {
        if (!threaded || closed || cycleLock.isHeldByCurrentThread()) {
            return 0;
        }
        return progressFromCaller();
    }

    /**
     * A poll returned a completion, or a CQ was armed for an event: the wait of the loop that drove the engine is
     * over, and what the application waits for next may be memory (the last byte of the peer's RDMA WRITE, as
     * perftest's write_lat waits) that no call of ours sees, or the event, which the engine thread raises while the
     * application sleeps. So the loop's mark ends here, not a window later, and an engine thread parked for the loop
     * is woken to drive the device until a loop marks it again. Otherwise, against a peer that ACKs at once (Linux
     * rxe, a ConnectX), the peer's WRITE that follows its ACK waited for the park to end, 1 to 16 ms, every
     * iteration. One read of the mark when no loop drives.
     */
    public void loopEnded() {
        if ((long) CALLER_CYCLE_NANOS.getOpaque(this) == NOT_DRIVEN) {
            return;
        }
        CALLER_CYCLE_NANOS.setVolatile(this, NOT_DRIVEN);   // volatile: see engineThreadCycle
        final Thread parked = parkedForCaller;
        if (parked != null) {
            LockSupport.unpark(parked);
        }
    }

    /**
     * THREAD mode: whether an application's polling loop drives the engine now, so the engine thread stays out
     * (tests, diagnostics).
     */
    public boolean drivenByCaller() {
        return threaded && callerDriving();
    }

    /**
     * Whether an application's polling loop ran a cycle by a progress call within the last
     * {@link #CALLER_WINDOW_NANOS}. Once that is past, the mark goes back to {@link #NOT_DRIVEN}, so an engine thread
     * whose application does not (or no longer) drive it reads no clock for this in its cycles.
     */
    private boolean callerDriving() {
        final long driven = (long) CALLER_CYCLE_NANOS.getOpaque(this);
        if (driven == NOT_DRIVEN) {
            return false;
        }
        if (System.nanoTime() - driven < CALLER_WINDOW_NANOS) {
            return true;
        }
        CALLER_CYCLE_NANOS.compareAndSet(this, driven, NOT_DRIVEN);   // unless a newer call marked it meanwhile
        return false;
    }

    /**
     * The engine thread's cycle. While an application drives the engine it parks instead, for the window (1 ms), then
     * twice as long each time up to {@link #CALLER_PARK_MAX_NANOS}: a wake-up on a core the application needs delays
     * one of its round trips. A poll that returns a completion wakes it at once ({@link #loopEnded}); an
     * application that stops calling without one gets its engine thread back within the window and that park (17 ms at
     * most), the bound {@link HeldAckWatch} keeps for a held ACK in CALLER mode; a post does not wake a thread parked
     * so.
     */
    private int engineThreadCycle() {
        if (callerDriving()) {
            // Dekker with loopEnded: this volatile store, then a volatile read of the mark; there a volatile
            // store of the mark, then a volatile read of this. One of the two sees the other: no wake-up is missed.
            parkedForCaller = Thread.currentThread();
            if ((long) CALLER_CYCLE_NANOS.getVolatile(this) != NOT_DRIVEN) {
                LockSupport.parkNanos(callerParkNanos);
            }
            parkedForCaller = null;
            callerParkNanos = Math.min(callerParkNanos << 1, CALLER_PARK_MAX_NANOS);
            // as work: the park was this thread's idling, so its idle strategy starts afresh when the loop is over and
            // yields before it sleeps on the sockets (a wake-up from there costs a round trip under a hypervisor)
            return 1;
        }
        callerParkNanos = CALLER_WINDOW_NANOS;
        return cycleIfFree(0);   // 0: a progress call started just now
    }

    /** A duty cycle under the lock if no other thread holds it, else {@code busy}. */
    private int cycleIfFree(final int busy) {
        if (!cycleLock.tryLock()) {
            return busy;
        }
        try {
            return dutyCycle();
        } finally {
            cycleLock.unlock();
        }
    }

    /**
     * The last look of a thread about to sleep in the kernel ({@link #sleep}): a cycle. CALLER mode (a device model's
     * firmware thread drives the engine): under the lock, waited for, as {@link #doWork}. THREAD mode: a cycle if the
     * lock is free; with an application driving the engine, or a cycle of another thread running, it reports work
     * instead, so the thread does not sleep on the sockets (waking at every datagram the application takes, or missing
     * a timer that cycle armed) and goes back to {@link #engineThreadCycle}, which parks while the calls come.
     */
    private int lastLook() {
        if (!threaded) {
            return doWork();
        }
        return callerDriving() ? 1 : cycleIfFree(1);
    }

    /**
     * {@link #nanosToNextTimer} for a sleep, read under the lock: waited for in CALLER mode; in THREAD mode 0 (look
     * again at once) if a cycle of another thread runs.
     */
    private long timerToSleepFor(final long now) {
        if (!threaded) {
            cycleLock.lock();
        } else if (!cycleLock.tryLock()) {
            return 0;
        }
        try {
            return nanosToNextTimer(now);
        } finally {
            cycleLock.unlock();
        }
    }

    /**
     * Transmit, receive, transmit. The first pass sends what the application posted since the last cycle before the
     * receive loop, which ends in a receive system call that finds nothing: a posted WR no longer waits behind it
     * (write-lat t_typical 6.82-6.87 -> 6.41-6.62 us, send-lat 6.82-6.97 -> 6.51-6.54 here). The second sends what
     * the received packets caused: responses, a window opened by an ACK, a retransmission.
     */
    private int dutyCycle() {
        int work = drainCommands();
        final long now = System.nanoTime();
        CYCLE_NANOS.setOpaque(this, now);   // a plain store on x86-64; atomic for the watch thread's read
        work += transmit(now);
        work += receive(now);
        return work + transmit(now);
    }

    /**
     * One pass over the QPs: timers, READ replies, requests (each QP at most {@link #TX_BUDGET} packets, all of them
     * within the device's room of unacknowledged PSNs).
     */
    private int transmit(final long now) {
        int work = 0;
        final int n = qpCount;
        psnRoom = ROOM_UNSUMMED;
        int at = firstToTransmit < n ? firstToTransmit : 0;
        firstToTransmit = at + 1;
        out.bursts(true);
        try {
            for (int i = 0; i < n; i++, at = at + 1 < n ? at + 1 : 0) {
                final TransportQp qp = qps[at];
                out.owner(qp.counters);
                try {
                    work += qp.run(now, TX_BUDGET);
                } catch (final RuntimeException e) {
                    engineError(e);
                }
            }
        } finally {
            out.owner(null);
            out.bursts(false);   // what waits in a burst leaves now, before the receive call
        }
        return work;
    }

    /**
     * RC PSNs this device's requesters may still send in this transmit pass: {@link
     * TransportQp#DEVICE_MAX_UNACKED_PSNS} less those its QPs have unacknowledged, summed when a requester first asks
     * in the pass (a pass that sends no request, most of them, sums nothing), then less what the pass sent since.
     */
    int psnRoom() {
        if (psnRoom == ROOM_UNSUMMED) {
            int unacked = 0;
            for (int i = 0; i < qpCount; i++) {
                unacked += qps[i].unackedPsns();
            }
            psnRoom = TransportQp.DEVICE_MAX_UNACKED_PSNS - unacked;
        }
        return psnRoom;
    }

    /** A requester sent {@code psns} PSNs in this pass, after asking {@link #psnRoom()}. */
    void spendPsnRoom(final int psns) {
        psnRoom -= psns;
    }

    /**
     * Takes what the link has waiting, at most {@link #RX_BUDGET} datagrams, in one batch (one recvmmsg on a socket
     * link: no empty receive call after the last datagram), then handles them in arrival order.
     */
    private int receive(final long now) {
        final RxBatch b = rxBatch;
        b.clear();
        final int n = link.receive(b);
        out.bursts(true);
        try {
            for (int i = 0; i < n; i++) {
                final int length = b.length(i);
                if (!counted(length)) {
                    continue;
                }
                rx.wrap(b.address(i), b.bytesToSlotEnd(i));
                try {
                    onPacket(b.source(i), length, b.receivedOn(i), b.segment(i), now);
                } catch (final RuntimeException e) {
                    engineError(e);
                } finally {
                    out.owner(null);
                }
            }
        } finally {
            out.bursts(false);   // the answers to this batch leave now
        }
        link.handled();   // a ring's frames go back now, not from another thread about to sleep
        return n + receiveGroups(RX_BUDGET - n);
    }

    /**
     * Counts a received datagram of {@code length} bytes (packets, bytes) and tells whether it fits a receive slot: one
     * that filled its slot was cut short by the kernel, and is counted as oversize and dropped.
     */
    private boolean counted(final int length) {
        counters.increment(RxeCounters.Counter.RCVD_PKTS);
        counters.add(RxeCounters.Counter.RCVD_BYTES, length);
        if (length >= RX_CAPACITY) {
            counters.increment(RxeCounters.Counter.DROP_OVERSIZE);
            return false;
        }
        return true;
    }

    private void onPacket(final InetSocketAddress src, final int length, final int on, final int segment,
            final long now) {
        if (!checkAndDecode(src, length, on >= 0 && on < locals.length ? locals[on] : locals[0], segment)) {
            return;
        }
        if (packet.destQp == 0) {
            counters.increment(RxeCounters.Counter.DROP_QP0); // rxe: QP0 unsupported on RoCE
            return;
        }
        final TransportQp qp = byQpn.get(packet.destQp);
        if (qp == null) {
            counters.increment(RxeCounters.Counter.DROP_UNKNOWN_QPN);
            return;
        }
        final RxeCounters qc = qp.counters;
        qc.increment(RxeCounters.Counter.RCVD_PKTS);
        qc.add(RxeCounters.Counter.RCVD_BYTES, length);
        out.owner(qc); // what the QP sends in answer counts there
        final int op = packet.opcode;
        final int transport = Opcode.transport(op);
        final QpType expected = transport == Opcode.TRANSPORT_RC ? QpType.RC
                : transport == Opcode.TRANSPORT_UC ? QpType.UC : transport == Opcode.TRANSPORT_UD ? QpType.UD : null;
        if (qp.type != expected) {
            qp.count(RxeCounters.Counter.DROP_BAD_QP_TYPE);
            return;
        }
        final boolean request = Opcode.isRequest(op);
        if (request ? !qp.canRespond() : !(qp.state == QpState.RTS || qp.state == QpState.SQD)) {
            qp.count(RxeCounters.Counter.DROP_BAD_QP_STATE);
            return;
        }
        if (qp.type != QpType.UD && (qp.peer == null || !packet.source.sameAddress(qp.peer))) {
            qp.count(RxeCounters.Counter.DROP_BAD_SRC_ADDR); // rxe: IP source must be the QP's peer
            return;
        }
        if (request) {
            qp.responder.onRequest(packet);
        } else {
            qp.completer.onResponse(packet, now);
        }
    }

    /** The datagram's source decoded; the JDK hands back the same object while the sender does not change. */
    private Peer source(final InetSocketAddress src) {
        if (src != lastSource) {
            lastPeer = new Peer(src);
            lastSource = src;
        }
        return lastPeer;
    }

    private void countDrop(final int status) {
        switch (status) {
            case PacketValidator.TRUNCATED:
                counters.increment(RxeCounters.Counter.DROP_TRUNCATED);
                break;
            case PacketValidator.BAD_LENGTH:
                counters.increment(RxeCounters.Counter.DROP_BAD_LENGTH);
                break;
            case PacketValidator.UNKNOWN_OPCODE:
                counters.increment(RxeCounters.Counter.DROP_UNKNOWN_OPCODE);
                break;
            case PacketValidator.BAD_TVER:
                counters.increment(RxeCounters.Counter.DROP_BAD_TVER);
                break;
            case PacketValidator.BAD_PKEY:
                counters.increment(RxeCounters.Counter.DROP_BAD_PKEY);
                break;
            default:
                counters.increment(RxeCounters.Counter.DROP_BAD_ICRC);
        }
    }

    /**
     * Checks a received datagram as arrived at {@code local} (address family, headers, ICRC; counted and traced)
     * and decodes it into {@link #packet}; false, with the drop counted, if it is not to be processed.
     * {@code segment}: which segment of a coalesced datagram the packet was (0 if it came alone); its sender computed
     * the ICRC with that as the IPv4 ID, the one the kernel gives it when it splits the datagram
     * ({@code Link#sendsCoalesced}).
     */
    private boolean checkAndDecode(final InetSocketAddress src, final int length, final Peer local,
            final int segment) {
        final Peer from = source(src);
        if (from.isIpv4() != local.isIpv4()) {
            counters.increment(RxeCounters.Counter.DROP_BAD_SRC_ADDR);
            return false;
        }
        final int status;
        int ipv4Id = 0;
        if (local.isIpv4()) {
            status = validator.validateIpv4(icrcMode, segment, from.ipv4Address(), local.ipv4Address(),
                    src.getPort(), local.socketAddress().getPort(), rx, 0, length);
            ipv4Id = validator.lastIpv4Id();
            if (status == PacketValidator.OK) {
                // a match with the expected ID is the full 32-bit check; any other ID was solved for (16 bits checked)
                counters.increment(ipv4Id == segment ? RxeCounters.Counter.ICRC_CHECKED_FULL
                        : RxeCounters.Counter.ICRC_RECOVERED_ID);
            }
        } else {
            status = validator.validateIpv6(from.hi(), from.lo(), local.hi(), local.lo(), src.getPort(),
                    local.socketAddress().getPort(), rx, 0, length);
        }
        if (tracer != null) {
            tracer.trace(from, local, src.getPort(), local.socketAddress().getPort(), rx, 0, length, ipv4Id);
        }
        if (status != PacketValidator.OK) {
            countDrop(status);
            return false;
        }
        packet.decode(rx, length, from, local, ipv4Id);
        return true;
    }

    private void engineError(final RuntimeException e) {
        counters.increment(RxeCounters.Counter.ENGINE_ERRORS);
        if (lastError == null) {
            System.err.println("jhca rxe engine " + name + ": unexpected " + e);
            e.printStackTrace();
        }
        lastError = e;
    }

    // ------------------------------------------------------------------------------------------ multicast

    /** Datagrams sent to the device's groups: each goes to every attached QP (rxe_recv.c rxe_rcv_mcast_pkt). */
    private int receiveGroups(final int budget) {
        final ByteBuffer slot = rxBatch.slot(0);   // the unicast batch is handled: its first slot is free
        int n = 0;
        while (n < budget) {
            slot.clear();
            final InetSocketAddress src = link.receiveGroup(slot);
            if (src == null) {
                break;
            }
            n++;
            counters.increment(RxeCounters.Counter.RCVD_MCAST_PKTS);
            final int length = slot.position();
            if (!counted(length)) {
                continue;
            }
            rx.wrap(rxBatch.slotAddress(0), RX_CAPACITY);
            try {
                onGroupPacket(src, length, mcast.group(link.lastGroup()));
            } catch (final RuntimeException e) {
                engineError(e);
            } finally {
                out.owner(null);
            }
        }
        return n;
    }

    /**
     * One multicast datagram: checked as any packet, its ICRC over the group as destination address; it must be a
     * UD SEND to QPN 0xFFFFFF (IBTA 10.5.2.1). Every attached QP in a state to receive gets a copy, each checking its
     * own Q_Key (the responder counts a mismatch as drop_bad_qkey), the sending QP included when the packet came
     * back through the host's loopback, as in Linux rxe, unless it asked for IBV_QP_CREATE_BLOCK_SELF_MCAST_LB.
     */
    private void onGroupPacket(final InetSocketAddress src, final int length, final McastTable.Group group) {
        if (group == null) {
            counters.increment(RxeCounters.Counter.DROP_MCAST_NO_MEMBER); // left while the datagram was queued
            return;
        }
        if (!checkAndDecode(src, length, group.peer, 0)) { // the ICRC covers the group's address
            return;
        }
        if (packet.destQp != io.jhca.verbs.QueuePair.MULTICAST_QPN
                || Opcode.transport(packet.opcode) != Opcode.TRANSPORT_UD) {
            counters.increment(RxeCounters.Counter.DROP_MCAST_BAD_QPN);
            return;
        }
        final TransportQp[] members = group.members;
        if (members.length == 0) {
            counters.increment(RxeCounters.Counter.DROP_MCAST_NO_MEMBER);
            return;
        }
        final boolean fromHere = packet.source.sameAddress(local);
        final int srcQp = fromHere ? packet.deth().srcQp() : -1;
        for (final TransportQp qp : members) {
            if (fromHere && qp.qpn == srcQp && qp.blockSelfMcastLoopback) {
                continue; // its own send, looped back by the host: blocked at its request
            }
            final RxeCounters qc = qp.counters;
            qc.increment(RxeCounters.Counter.RCVD_PKTS);
            qc.add(RxeCounters.Counter.RCVD_BYTES, length);
            if (!qp.canRespond()) {
                qp.count(RxeCounters.Counter.DROP_BAD_QP_STATE);
                continue;
            }
            out.owner(qc);
            qp.responder.onRequest(packet);
        }
    }

    /** Attaches a UD QP to a group; the device joins the IP group with its first member (control path). */
    public void attachMcast(final TransportQp qp, final io.jhca.verbs.Gid mgid) {
        runOnEngine(() -> mcast.attach(qp, mgid));
    }

    /** Detaches a QP; the device leaves the IP group with its last member (control path). */
    public void detachMcast(final TransportQp qp, final io.jhca.verbs.Gid mgid) {
        runOnEngine(() -> mcast.detach(qp, mgid));
    }

    // ------------------------------------------------------------------------------------------ control path

    /** Registers a QP so packets reach it (control path, engine thread). */
    public void addQp(final TransportQp qp) {
        runOnEngine(() -> {
            if (qpCount == qps.length) {
                qps = java.util.Arrays.copyOf(qps, qpCount * 2);
            }
            qps[qpCount++] = qp;
            byQpn.put(qp.qpn, qp);
        });
    }

    public void removeQp(final TransportQp qp) {
        runOnEngine(() -> {
            // an ACK still held goes out first: the application may destroy the QP right after its last receive
            qp.releaseHeldAck();
            byQpn.remove(qp.qpn);
            for (int i = 0; i < qpCount; i++) {
                if (qps[i] == qp) {
                    qps[i] = qps[--qpCount];
                    qps[qpCount] = null;
                    break;
                }
            }
        });
    }

    /**
     * Runs {@code action} where it cannot race the engine: at once if the caller drives the engine itself (CALLER
     * mode: under the lock every duty cycle holds), is the engine thread, or the engine is closed; otherwise queued
     * and waited for, run by the next cycle, or by this thread under the lock when no cycle runs. Exceptions are
     * rethrown to the caller.
     */
    public void runOnEngine(final Runnable action) {
        if (!threaded) {
            cycleLock.lock();
            try {
                action.run();
            } finally {
                cycleLock.unlock();
            }
            return;
        }
        if (closed || Thread.currentThread() == thread) {
            action.run();
            return;
        }
        final Command c = new Command(action);
        while (!commands.offer(c)) {
            Thread.yield();
        }
        notifyPosted();
        while (!c.done) {
            if (closed && commands.remove(c)) {
                action.run(); // the engine stopped before taking it
                return;
            }
            if (cycleLock.tryLock()) {
                // no cycle runs (the engine thread may be parked while an application drives it): run what is
                // queued, this action included, here; no cycle starts meanwhile
                try {
                    drainCommands();
                } finally {
                    cycleLock.unlock();
                }
            } else {
                Thread.yield();
            }
        }
        if (c.error != null) {
            if (c.error instanceof RuntimeException) {
                throw (RuntimeException) c.error;
            }
            throw new IllegalStateException(c.error);
        }
    }

    private int drainCommands() {
        int n = 0;
        Command c;
        while ((c = commands.poll()) != null) {
            try {
                c.action.run();
            } catch (final Throwable t) {
                c.error = t;
            }
            c.done = true;
            n++;
        }
        return n;
    }

    private static final class Command {
        final Runnable action;
        volatile boolean done;
        Throwable error;

        Command(final Runnable action) {
            this.action = action;
        }
    }
}
