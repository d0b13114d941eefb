package io.jhca.connectx;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import io.jhca.mlx5.cmd.CmdStatus;
import io.jhca.mlx5.cmd.Layout;
import io.jhca.mlx5.cmd.QCounterLayouts;

/**
 * ALLOC_Q_COUNTER, DEALLOC_Q_COUNTER and QUERY_Q_COUNTER over the model's {@link QCounterSet}s. A set is a number
 * 1..{@link ModelCaps#MAX_Q_COUNTERS} (0 in a QPC means "no set"); a set that QPs still name cannot be freed; a query
 * answers every counter as the device does, in 32 bits, and with {@code clear} zeroes the set after the read.
 */
final class QCounterCommands {

    private final DeviceState st;

    QCounterCommands(DeviceState st) {
        this.st = st;
    }

    void alloc(MutableDirectBuffer o, Layout out) throws CmdError {
        int id = st.qCounters.nextFree();
        if (id < 0) {
            throw new CmdError(CmdStatus.NO_RES_ERR, CmdSyndromes.TABLE_FULL, "all " + ModelCaps.MAX_Q_COUNTERS
                    + " Q counter sets are allocated");
        }
        st.qCounters.put(id, new QCounterSet(id));
        out.set(o, 0, "counter_set_id", id);
    }

    void dealloc(DirectBuffer i, Layout in) throws CmdError {
        QCounterSet set = set(in.get(i, 0, "counter_set_id"));
        if (set.members() > 0) {
            throw new CmdError(CmdStatus.RES_BUSY, CmdSyndromes.OBJECT_IN_USE, "Q counter " + set.id + " counts "
                    + set.members() + " QPs");
        }
        st.qCounters.remove(set.id);
    }

    void query(DirectBuffer i, MutableDirectBuffer o, Layout in, Layout out) throws CmdError {
        QCounterSet set = set(in.get(i, 0, "counter_set_id"));
        long[] v = set.read(in.get(i, 0, "clear") != 0);
        for (int k = 0; k < v.length; k++) {
            out.set(o, 0, QCounterLayouts.COUNTERS.get(k), v[k] & 0xffffffffL); // 32-bit counters wrap
        }
    }

    /** The allocated set {@code id}, for commands and for qpc.counter_set_id. */
    QCounterSet set(long id) throws CmdError {
        QCounterSet set = id > 0 && id <= ModelCaps.MAX_Q_COUNTERS ? st.qCounters.get((int) id) : null;
        if (set == null) {
            throw CmdError.badResource(CmdSyndromes.BAD_Q_COUNTER, "Q counter " + id + " is not allocated");
        }
        return set;
    }
}
