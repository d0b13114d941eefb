package io.jhca.tests.harness;

import io.jhca.connectx.ConnectXModel;
import io.jhca.rxe.ProgressMode;
import io.jhca.rxe.RxeContext;
import io.jhca.rxe.RxeDeviceConfig;
import io.jhca.rxe.RxeProvider;
import io.jhca.rxe.link.FaultyLink;
import io.jhca.rxe.link.LinkFaults;
import io.jhca.rxe.transport.RxeCounters;
import io.jhca.verbs.Context;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * rxe device pairs made programmatically with {@link RxeDeviceConfig}: own names and loopback addresses (so they
 * never collide with rxe0/rxe1 or with each other), CALLER progress, fault injection. The one place of the suite
 * that knows the rxe provider's own API; everything else goes through the verbs API.
 */
public final class RxeDevices {
    private RxeDevices() {
    }

    /** A pair in CALLER mode: no engine threads, the harness drives both engines from its polling loops. */
    public static DevicePair callerPair(String nameA, String nameB, String ipA, String ipB) {
        return pair(nameA + "<->" + nameB + " (CALLER)", nameA, nameB, ipA, ipB, ProgressMode.CALLER, LinkFaults.NONE, 0,
                true);
    }

    /** A pair with engine threads on its own addresses. */
    public static DevicePair pair(String nameA, String nameB, String ipA, String ipB) {
        return pair(nameA + "<->" + nameB + " (THREAD)", nameA, nameB, ipA, ipB, ProgressMode.THREAD, LinkFaults.NONE, 0,
                true);
    }

    /**
     * A THREAD-mode pair that sends every packet as a datagram of its own, as devices off loopback do: on lo the kernel
     * never splits a coalesced pair or a burst, so a capture there shows one packet a frame only from such devices.
     */
    public static DevicePair onePacketADatagramPair(String nameA, String nameB, String ipA, String ipB) {
        return pair(nameA + "<->" + nameB + " (THREAD, no GSO)", nameA, nameB, ipA, ipB, ProgressMode.THREAD,
                LinkFaults.NONE, 0, false);
    }

    /**
     * A THREAD-mode pair whose links misbehave on transmit, each device with its own seed: every packet, in
     * either direction, is subject to the faults once.
     */
    public static DevicePair faultyPair(String nameA, String nameB, String ipA, String ipB, double drop, double duplicate,
                                        double reorder, double corrupt, long seed) {
        LinkFaults f = LinkFaults.NONE.withDrop(drop).withDuplicate(duplicate).withReorder(reorder).withCorrupt(corrupt);
        return pair(nameA + "<->" + nameB + " (THREAD, faults " + f + ")", nameA, nameB, ipA, ipB, ProgressMode.THREAD, f, seed,
                true);
    }

    private static DevicePair pair(String label, String nameA, String nameB, String ipA, String ipB, ProgressMode mode,
                                   LinkFaults faults, long seed, boolean gso) {
        DevicePair.Progress progress = mode == ProgressMode.CALLER ? DevicePair.Progress.CALLER : DevicePair.Progress.THREAD;
        return DevicePair.present(label, "rxe", progress, side -> RxeProvider.open(RxeDeviceConfig.builder(side == 0 ? nameA : nameB)
                        .address(side == 0 ? ipA : ipB).progressMode(mode).txFaults(faults).faultSeed(seed + side).gso(gso)
                        .build()),
                DevicePairs.ip(ipA), DevicePairs.ip(ipB));
    }

    /** The rxe transport of a device: itself, or a ConnectX model's wire. */
    static RxeContext wire(Context c) {
        if (c instanceof RxeContext) {
            return (RxeContext) c;
        }
        ConnectXModel m = ModelCounterChecks.model(c);
        if (m == null) {
            throw new AssertionError(c.name() + " is neither an rxe device nor a ConnectX model");
        }
        return m.wire();
    }

    /**
     * Packets of BTH transport {@code transport} ({@code Opcode.TRANSPORT_*}) that faulty links dropped or corrupted
     * on their way from {@code from} to {@code to}: the sender's link as it sent them, the receiver's as it took them.
     */
    public static long lostOnTheWay(Context from, Context to, int transport) {
        long n = 0;
        if (wire(from).link() instanceof FaultyLink f) {
            n += f.lost(FaultyLink.Direction.TX, transport);
        }
        if (wire(to).link() instanceof FaultyLink f) {
            n += f.lost(FaultyLink.Direction.RX, transport);
        }
        return n;
    }

    /** The rxe counters and fault counters of both devices, for messages. */
    public static String describeCounters(Context a, Context b) {
        return describe(a) + "\n" + describe(b);
    }

    private static String describe(Context c) {
        if (!(c instanceof RxeContext) && ModelCounterChecks.model(c) == null) {
            return c.name() + ": not an rxe device";
        }
        RxeContext r = wire(c);
        StringBuilder sb = new StringBuilder(c.name()).append(" counters ").append(r.counters());
        if (r.link() instanceof FaultyLink) {
            FaultyLink f = (FaultyLink) r.link();
            sb.append("\n  link tx:");
            for (FaultyLink.Fault k : FaultyLink.Fault.values()) {
                sb.append(' ').append(k.name().toLowerCase()).append('=').append(f.counter(FaultyLink.Direction.TX, k));
            }
        }
        return sb.toString();
    }

    /**
     * Asserts the fault injection really happened in both directions (each fault applied, corrupted packets
     * caught by the receiver's ICRC check), so a soak run can never pass vacuously.
     */
    public static void assertFaultsHappened(Context a, Context b) {
        assertFaultsHappened(a, b, true);
    }

    /** As {@link #assertFaultsHappened(Context, Context)}; corruption only if {@code corruption}. */
    public static void assertFaultsHappened(Context a, Context b, boolean corruption) {
        Context[][] dirs = {{a, b}, {b, a}};
        for (Context[] d : dirs) {
            RxeContext tx = wire(d[0]);
            RxeContext rx = wire(d[1]);
            assertTrue(tx.link() instanceof FaultyLink, tx.name() + " has a faulty link");
            FaultyLink f = (FaultyLink) tx.link();
            String what = tx.name() + " -> " + rx.name() + ": " + describeCounters(a, b);
            for (FaultyLink.Fault k : new FaultyLink.Fault[] {FaultyLink.Fault.DROPPED, FaultyLink.Fault.DUPLICATED,
                    FaultyLink.Fault.REORDERED, FaultyLink.Fault.CORRUPTED}) {
                if (k != FaultyLink.Fault.CORRUPTED || corruption) {
                    assertTrue(f.counter(FaultyLink.Direction.TX, k) > 0, k + " never happened " + what);
                }
            }
            if (corruption) {
                assertTrue(rx.counters().get(RxeCounters.Counter.DROP_BAD_ICRC) > 0,
                        "corrupted packets were caught by " + rx.name() + "'s ICRC check " + what);
            }
        }
    }
}
