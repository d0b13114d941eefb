package io.jhca.connectx;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.agrona.collections.Int2ObjectHashMap;

import io.jhca.mlx5.eq.EventType;
import io.jhca.verbs.Gid;

/**
 * Everything the firmware has created, shared by the command handlers and the data path (firmware thread only):
 * the bring-up state, firmware pages, UARs, PDs, memory keys, EQs, CQs, QPs and the RoCE address (GID) table.
 */
final class DeviceState {

    final String name;
    final Iommu iommu;
    final ModelCounters counters;
    final RxeMirror rxe;
    final InetAddress portAddress;
    final Gid portGid;

    // ---- bring-up
    boolean enabled;
    int issi;
    boolean initialized;
    final Set<Long> firmwarePages = new LinkedHashSet<>();
    /** Pages the firmware needs beyond boot and init: raised and lowered by its PAGE_REQUEST events. */
    int regularPages;

    // ---- objects
    final int[] uarUsers = new int[ModelCaps.BAR0_PAGES];
    final boolean[] uarAllocated = new boolean[ModelCaps.BAR0_PAGES];
    final ObjectTable<DevicePd> pds = new ObjectTable<>(1, (1 << ModelCaps.LOG_MAX_PD) - 1);
    final ObjectTable<DeviceMkey> mkeys = new ObjectTable<>(1, (1 << ModelCaps.LOG_MAX_MKEY) - 1);
    /**
     * Private keys of the model's own bounce buffers: indexes above any the driver can get, and close enough to them
     * for the rxe key table (MrTable.reserveChosenKey takes indexes at most 2^16 ahead of its highest one).
     */
    final ObjectTable<Boolean> privateKeys = new ObjectTable<>(1 << ModelCaps.LOG_MAX_MKEY,
            (1 << (ModelCaps.LOG_MAX_MKEY + 1)) - 1);
    final ObjectTable<DeviceEq> eqs = new ObjectTable<>(1, (1 << ModelCaps.LOG_MAX_EQ) - 1);
    final ObjectTable<DeviceCq> cqs = new ObjectTable<>(1, (1 << ModelCaps.LOG_MAX_CQ) - 1);
    final Int2ObjectHashMap<DeviceQp> qps = new Int2ObjectHashMap<>();
    /** The same QPs in an array list, so the data path walks them without an iterator. */
    final List<DeviceQp> qpList = new ArrayList<>();
    /** The same CQs, for draining rxe completions. */
    final List<DeviceCq> cqList = new ArrayList<>();
    /** Q counter sets by counter_set_id (ALLOC_Q_COUNTER). */
    /** Shared receive queues by SRQN, and the same in a list for the data path. */
    final ObjectTable<DeviceSrq> srqs = new ObjectTable<>(1, (1 << ModelCaps.LOG_MAX_SRQ) - 1);
    final List<DeviceSrq> srqList = new ArrayList<>();
    final ObjectTable<QCounterSet> qCounters = new ObjectTable<>(1, ModelCaps.MAX_Q_COUNTERS);

    // ---- RoCE address table (SET_ROCE_ADDRESS)
    final byte[][] gids = new byte[ModelCaps.GID_TABLE_ENTRIES][];
    final int[] gidVersion = new int[ModelCaps.GID_TABLE_ENTRIES];
    final int[] gidL3Type = new int[ModelCaps.GID_TABLE_ENTRIES];
    final long[] gidMac = new long[ModelCaps.GID_TABLE_ENTRIES];

    /**
     * Where the function's MSI-X interrupts go: called with the vector (eqc.intr) when an armed EQ gets an entry; null
     * when nobody listens (a polling driver never arms, so nothing is lost).
     */
    volatile java.util.function.IntConsumer interrupts;

    DeviceState(String name, Iommu iommu, ModelCounters counters, RxeMirror rxe, InetAddress portAddress) {
        this.name = name;
        this.iommu = iommu;
        this.counters = counters;
        this.rxe = rxe;
        this.portAddress = portAddress;
        this.portGid = Gid.of(portAddress);
    }

    /** The EQ that receives CQ_ERROR events: the lowest-numbered EQ whose event_bitmask asks for them. */
    DeviceEq asyncEq(int type) {
        for (DeviceEq eq : eqs.values()) {
            if (eq.wants(type) && !eq.faulted) {
                return eq;
            }
        }
        return null;
    }

    /** Reports a CQ error on the async EQ (if any asked for CQ_ERROR events). */
    void reportCqError(DeviceCq cq, int syndrome) {
        DeviceEq eq = asyncEq(EventType.CQ_ERROR);
        if (eq != null) {
            eq.cqError(cq.cqn, syndrome);
        }
    }

    /** Reports a QP or SRQ event on the EQ that asked for {@code type}, if any. */
    void reportQpSrqEvent(int type, int number) {
        DeviceEq eq = asyncEq(type);
        if (eq != null) {
            eq.qpSrqEvent(type, number);
        }
    }

    DeviceQp qp(int qpn) {
        return qps.get(qpn);
    }
}
