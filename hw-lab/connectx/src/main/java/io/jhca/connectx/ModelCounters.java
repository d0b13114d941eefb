package io.jhca.connectx;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * What the device model saw, counted: doorbells, commands, WQEs, CQEs, EQEs and every kind of driver mistake it
 * caught. Written by the firmware thread, readable from any thread (tests, {@code hwlab devinfo}).
 */
public final class ModelCounters {

    /** The counters; names say what is counted. */
    public enum Counter {
        /** Command doorbell bits taken from cmd_dbell. */
        CMD_DOORBELLS,
        /** Commands executed (delivered and answered, whatever the status). */
        COMMANDS,
        /** Commands answered with a status other than OK. */
        COMMAND_ERRORS,
        /** Commands found owned by the device without a doorbell bit (a doorbell overwritten by another). */
        CMD_DOORBELLS_RECOVERED,
        /** 8-byte send doorbells seen in UAR pages. */
        SQ_DOORBELLS,
        /** Send doorbells that did not match the posted WQE's first 8 bytes, its QP or its UAR page (driver bug). */
        SQ_DOORBELL_MISMATCHES,
        /** CQ arm doorbells (UAR + 0x20). */
        CQ_ARM_DOORBELLS,
        /** EQ doorbells (UAR + 0x40 / 0x48). */
        EQ_DOORBELLS,
        /** Send WQEs fetched from SQ rings. */
        SEND_WQES,
        /** Receive WQEs fetched from RQ rings. */
        RECV_WQES,
        /** Send WQEs refused as malformed (opcode, DS count, segment layout, inline length, keys, addresses). */
        MALFORMED_WQES,
        /** CQEs written (all kinds). */
        CQES,
        /** Error CQEs written (flushes included). */
        ERROR_CQES,
        /** CQEs that could not be written: CQ full (overrun), CQ in error or unreachable. */
        CQES_DROPPED,
        /** CQs that overran. */
        CQ_OVERRUNS,
        /** EQEs written. */
        EQES,
        /** EQEs dropped because the EQ was full. */
        EQES_DROPPED,
        /** DMA accesses refused by the IOMMU (objects stopped because their memory was unmapped, bad PAS...). */
        DMA_FAULTS,
        /** Completions from the rxe transport for QPs or CQs no longer known (destroyed meanwhile). */
        STRAY_COMPLETIONS,
        /** Unexpected exceptions inside the model (a model bug; the firmware thread keeps running). */
        MODEL_ERRORS,
        /** CQ arms taken from the CQ's doorbell record because another CQ's arm doorbell had overwritten theirs. */
        CQ_ARMS_RECOVERED
    }

    private final AtomicLongArray values = new AtomicLongArray(Counter.values().length);

    void increment(Counter c) {
        values.lazySet(c.ordinal(), values.get(c.ordinal()) + 1); // single writer: the firmware thread
    }

    void add(Counter c, long n) {
        values.lazySet(c.ordinal(), values.get(c.ordinal()) + n);
    }

    /** Safe from any thread when the firmware thread may also increment (control-path counters). */
    void incrementAtomic(Counter c) {
        values.incrementAndGet(c.ordinal());
    }

    public long get(Counter c) {
        return values.get(c.ordinal());
    }

    /** A snapshot of every counter. */
    public Map<Counter, Long> snapshot() {
        Map<Counter, Long> m = new EnumMap<>(Counter.class);
        for (Counter c : Counter.values()) {
            m.put(c, get(c));
        }
        return m;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        for (Counter c : Counter.values()) {
            long v = get(c);
            if (v != 0) {
                sb.append(sb.length() == 0 ? "" : ", ").append(c.name().toLowerCase()).append('=').append(v);
            }
        }
        return sb.length() == 0 ? "(none)" : sb.toString();
    }
}
