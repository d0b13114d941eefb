package io.jhca.connectx;

import java.nio.ByteOrder;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.mlx5.cmd.CmdQueueEntry;
import io.jhca.mlx5.cmd.InitSegment;

/**
 * The initialization segment at the start of BAR0 (kernel device.h {@code struct mlx5_init_seg}), as firmware keeps
 * it. BAR0 is plain memory here, so "register writes" are noticed by polling:
 * <ul>
 *   <li>power-on: fw_rev, cmdif_rev 5, the queue geometry in cmdq_addr_l_sz bits 7:0 (read-only there: 2^5 entries
 *       of 2^6 bytes), {@code initializing} set. Firmware "boots" for a short pre-init time and clears it (mlx5_core
 *       waits for that before programming the queue, kernel commit "Wait for FW readiness before initializing command
 *       interface"); the driver's write of cmdq_phy_addr also ends it at once (PRM start-up order, as Snabb waits after
 *       writing the address).</li>
 *   <li>the driver's write of cmdq_addr_l_sz wipes the read-only size bits: that is how the write is seen; the model
 *       puts them back (compare-and-set, so a racing write is never lost), attaches {@link CmdQueueDevice} to the
 *       queue and keeps nic_interface (bits 10:8).</li>
 *   <li>cmd_dbell is taken with an atomic swap to 0: each bit is a command slot to execute. Two drivers' threads
 *       ringing at once can overwrite each other's bit in memory (a register would OR them); a slot found owned by the
 *       device for longer than {@link #LOST_DOORBELL_NANOS} without its bit is executed anyway and counted. The scan
 *       runs only while the queue is live: from the address write or a doorbell until a command leaves the function
 *       disabled (DISABLE_HCA, a refused ENABLE_HCA) or it is reset. A driver frees the queue's page after
 *       DISABLE_HCA; with the IOMMU out of the picture (IOVA = guest-physical address) that page may be anything a
 *       moment later, and a scan of it would run whatever bytes it finds and write their "output" into guest
 *       memory. A real device only ever reads the queue on a doorbell.</li>
 *   <li>health_counter (bits 23:0) ticks every {@value #HEALTH_TICK_MS} ms and the internal timer follows the clock,
 *       so rdma-core-style health polling sees a live device.</li>
 * </ul>
 * All registers are big-endian 32-bit words.
 */
final class InitSegmentDevice {

    static final int LOG_CMDQ_SIZE = 5;
    static final int LOG_CMDQ_STRIDE = 6;
    /** Firmware version the model reports: 16.35.2000 (a ConnectX-5 release), fw_rev = minor << 16 | major. */
    static final int FW_MAJOR = 16;
    static final int FW_MINOR = 35;
    static final int FW_SUBMINOR = 2000;
    static final long DEFAULT_PRE_INIT_NANOS = 10_000_000L;
    static final long LOST_DOORBELL_NANOS = 20_000_000L;
    static final int HEALTH_TICK_MS = 10;

    private static final boolean SWAP = ByteOrder.nativeOrder() != ByteOrder.BIG_ENDIAN;

    private final UnsafeBuffer bar;
    private final Iommu iommu;
    private final CmdQueueDevice cmdq;
    private final Firmware firmware;
    private final DeviceState st;
    private final UnsafeBuffer entryView = new UnsafeBuffer(0, 0);
    private final long bootDeadline;
    private final long[] ownedSince = new long[1 << LOG_CMDQ_SIZE];
    private boolean booted;
    private long queueIova;
    /** Host address of the queue page (resolved once; 0 once its memory was unmapped). */
    private long queueHost;
    private int nicInterface;
    private long nextScan;
    /** Whether the lost-doorbell scan runs (see the class comment). */
    private boolean live;
    private long nextHealth;
    private int healthCounter;

    InitSegmentDevice(UnsafeBuffer bar, Iommu iommu, Firmware firmware, DeviceState st, long preInitNanos) {
        this.bar = bar;
        this.iommu = iommu;
        this.cmdq = new CmdQueueDevice(iommu);
        this.firmware = firmware;
        this.st = st;
        write(InitSegment.FW_REV, FW_MINOR << 16 | FW_MAJOR);
        write(InitSegment.CMDIF_REV_FW_SUB, InitSegment.CMDIF_REV << 16 | FW_SUBMINOR);
        write(InitSegment.CMDQ_ADDR_H, 0);
        write(InitSegment.CMDQ_ADDR_L_SZ, sizeBits());
        write(InitSegment.INITIALIZING, 1 << 31);
        write(InitSegment.HEALTH_FW_VER, FW_MAJOR << 24 | FW_MINOR << 16 | FW_SUBMINOR);
        write(InitSegment.HEALTH_SYND_DWORD, 0);
        this.bootDeadline = System.nanoTime() + preInitNanos;
    }

    private static int sizeBits() {
        return LOG_CMDQ_SIZE << 4 | LOG_CMDQ_STRIDE;
    }

    private int read(int offset) {
        int raw = bar.getIntVolatile(offset);
        return SWAP ? Integer.reverseBytes(raw) : raw;
    }

    private void write(int offset, int value) {
        bar.putIntVolatile(offset, SWAP ? Integer.reverseBytes(value) : value);
    }

    private static int raw(int value) {
        return SWAP ? Integer.reverseBytes(value) : value;
    }

    /** The command queue the driver programmed (0 before), and whether commands are being served. */
    long queueIova() {
        return queueIova;
    }

    int nicInterface() {
        return nicInterface;
    }

    int poll(long now) {
        int work = 0;
        if (!booted && now - bootDeadline >= 0) {
            booted = true;
            write(InitSegment.INITIALIZING, 0);
        }
        work += queueAddress();
        int raw = bar.getAndSetInt(InitSegment.CMD_DBELL, 0);
        if (raw != 0) {
            int mask = SWAP ? Integer.reverseBytes(raw) : raw; // be32 slot bit mask
            st.counters.add(ModelCounters.Counter.CMD_DOORBELLS, Integer.bitCount(mask));
            live = true;
            work += execute(mask);
        }
        if (live && cmdq.attached() && now - nextScan >= 0) {
            nextScan = now + 1_000_000L;
            work += recoverLostDoorbells(now);
        }
        if (now - nextHealth >= 0) {
            nextHealth = now + HEALTH_TICK_MS * 1_000_000L;
            healthCounter = (healthCounter + 1) & 0xffffff;
            write(InitSegment.HEALTH_COUNTER, healthCounter);
            write(InitSegment.INTERNAL_TIMER_H, (int) (now >>> 32));
            write(InitSegment.INTERNAL_TIMER_L, (int) now);
        }
        return work;
    }

    /** Notices the driver's write of cmdq_addr_l_sz (the read-only size bits went to 0). */
    private int queueAddress() {
        int r = bar.getIntVolatile(InitSegment.CMDQ_ADDR_L_SZ);
        int lo = SWAP ? Integer.reverseBytes(r) : r;
        if ((lo & 0xff) != 0) {
            return 0;
        }
        if (!bar.compareAndSetInt(InitSegment.CMDQ_ADDR_L_SZ, r, raw(lo | sizeBits()))) {
            return 1; // written again meanwhile: look next cycle
        }
        nicInterface = (lo >>> 8) & 7;
        long address = Integer.toUnsignedLong(read(InitSegment.CMDQ_ADDR_H)) << 32 | Integer.toUnsignedLong(lo & ~0xfff);
        if (address != 0 && address != queueIova) {
            write(InitSegment.INITIALIZING, 1 << 31);
            try {
                cmdq.attach(address, LOG_CMDQ_SIZE, LOG_CMDQ_STRIDE);
                queueIova = address;
                queueHost = Math.max(0, iommu.hostAddress(address, 1 << (LOG_CMDQ_SIZE + LOG_CMDQ_STRIDE)));
                java.util.Arrays.fill(ownedSince, 0);
                live = true;
            } catch (IllegalArgumentException e) {
                st.counters.increment(ModelCounters.Counter.DMA_FAULTS);
            }
            booted = true;
            write(InitSegment.INITIALIZING, 0);
        }
        if (nicInterface == InitSegment.NIC_IFC_DISABLED || nicInterface == InitSegment.NIC_IFC_SW_RESET) {
            firmware.reset(); // fast teardown / software reset: the function forgets everything
            quiet();
        }
        return 1;
    }

    private int execute(int mask) {
        if (!cmdq.attached()) {
            return 0;
        }
        int done = cmdq.onDoorbell(mask, firmware);
        for (int s = 0; s < ownedSince.length; s++) {
            if ((mask & (1 << s)) != 0) {
                ownedSince[s] = 0;
            }
        }
        if (!st.enabled) {
            quiet(); // DISABLE_HCA ran (or ENABLE_HCA was refused): the driver may free the queue's page now
        }
        if (done > 0) {
            DeviceEq eq = st.asyncEq(io.jhca.mlx5.eq.EventType.CMD);
            if (eq != null) {
                eq.commandDone(mask); // mlx5_eqe_cmd.vector: the slots just completed
            }
        }
        return done;
    }

    /** No more scanning of the queue until the driver programs it again or rings a doorbell. */
    private void quiet() {
        live = false;
        java.util.Arrays.fill(ownedSince, 0);
    }

    /** Whether the lost-doorbell scan is running. */
    boolean scanning() {
        return live;
    }

    /** The function left the bus: all of BAR0 reads as ones, as a PCI read of an absent function does. */
    void removed() {
        bar.setMemory(0, bar.capacity(), (byte) 0xff);
    }

    /** The queue page's memory went away: no more scanning it (commands would fault in CmdQueueDevice anyway). */
    void unmapped(long iova, long length) {
        if (queueIova >= iova && queueIova < iova + length) {
            queueHost = 0;
        }
    }

    private static boolean owned(long[] since) {
        for (long t : since) {
            if (t != 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * Nanoseconds from {@code now} until {@link #poll} has something to do by the clock: the health counter's tick,
     * the end of pre-init, and while a command slot is owned by the device the lost-doorbell scan (a doorbell is
     * seen at once by the firmware thread, which the driver's write wakes; only a slot whose bit a racing doorbell
     * overwrote waits for a scan).
     */
    long nanosToNextTimer(long now) {
        long next = nextHealth - now;
        if (!booted) {
            next = Math.min(next, bootDeadline - now);
        }
        if (live && cmdq.attached() && owned(ownedSince)) {   // a slot the last scan found owned: scan each ms
            next = Math.min(next, nextScan - now);
        }
        return next;
    }

    private int recoverLostDoorbells(long now) {
        if (queueHost == 0) {
            return 0;
        }
        int lost = 0;
        for (int s = 0; s < cmdq.slots(); s++) {
            entryView.wrap(queueHost + ((long) s << LOG_CMDQ_STRIDE), CmdQueueEntry.SIZE);
            boolean owned = (entryView.getByteVolatile(CmdQueueEntry.SIZE - 1) & 1) != 0; // status_own bit 0
            if (!owned) {
                ownedSince[s] = 0;
            } else if (ownedSince[s] == 0) {
                ownedSince[s] = now;
            } else if (now - ownedSince[s] > LOST_DOORBELL_NANOS) {
                lost |= 1 << s;
            }
        }
        if (lost == 0) {
            return 0;
        }
        st.counters.add(ModelCounters.Counter.CMD_DOORBELLS_RECOVERED, Integer.bitCount(lost));
        return execute(lost);
    }
}
