package io.jhca.verbs.fake;

import java.util.ArrayList;
import java.util.List;

import org.agrona.DirectBuffer;

import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.WrOpcode;

/**
 * A send builder whose provider side writes each WR down as text, in either of the two ways a provider may take the
 * common WR: when it closes (the default {@code driverPlainWr}: open, SGE, close) or at its first SGE, reopened by a
 * second one, as mlx5 does. The same calls must read the same either way.
 */
public final class RecordingSendQueue extends SendQueue {
    /** The WRs of every completed batch, in order. */
    public final List<String> posted = new ArrayList<>();
    private final List<StringBuilder> batch = new ArrayList<>();
    private final boolean atFirstSge;
    private StringBuilder open;

    RecordingSendQueue(QueuePair qp, boolean writeAtFirstSge) {
        super(qp, writeAtFirstSge);
        this.atFirstSge = writeAtFirstSge;
    }

    /** How a WR reads, opened with these arguments, before its gather list or inline data. */
    public static String wr(WrOpcode op, long wrId, int flags, int imm, int rkey, long raddr, long compareAdd, long swap) {
        return op + " id=" + wrId + " flags=" + flags + " imm=" + imm + " rkey=" + rkey + " raddr=" + raddr + " atomic="
                + compareAdd + "/" + swap;
    }

    public static String sgeText(int lkey, long addr, int length) {
        return " sge=" + lkey + "@" + addr + "+" + length;
    }

    @Override
    protected void driverStart() {
        batch.clear();
        open = null;
    }

    @Override
    protected boolean driverOpenWr(WrOpcode op, long wrId, int sendFlags, int imm, int rkey, long remoteAddr,
                                   long compareAdd, long swap) {
        if (open != null) {
            throw new AssertionError("a WR opened while " + open + " is open");
        }
        open = new StringBuilder(wr(op, wrId, sendFlags, imm, rkey, remoteAddr, compareAdd, swap));
        batch.add(open);
        return true;
    }

    @Override
    protected boolean driverPlainWr(int opOrdinal, long wrId, int sendFlags, int imm, int rkey, long remoteAddr,
                                    int lkey, long addr, int length, boolean hasSge) {
        if (!atFirstSge) {
            return super.driverPlainWr(opOrdinal, wrId, sendFlags, imm, rkey, remoteAddr, lkey, addr, length, hasSge);
        }
        if (open != null) {
            throw new AssertionError("a whole WR written while " + open + " is open");
        }
        StringBuilder w = new StringBuilder(wr(WrOpcode.values()[opOrdinal], wrId, sendFlags, imm, rkey, remoteAddr, 0, 0));
        if (hasSge) {
            w.append(sgeText(lkey, addr, length));
        }
        batch.add(w);
        return true;
    }

    @Override
    protected void driverReopenPlainWr() {
        if (open != null || batch.isEmpty()) {
            throw new AssertionError("reopen with " + (open != null ? open + " open" : "nothing written"));
        }
        open = batch.get(batch.size() - 1);
    }

    @Override
    protected void driverUdAddr(AddressHandle ah, int remoteQpn, int remoteQkey) {
        opened().append(" ud=").append(remoteQpn);
    }

    @Override
    protected void driverSge(int lkey, long addr, int length) {
        opened().append(sgeText(lkey, addr, length));
    }

    @Override
    protected void driverInline(DirectBuffer src, int offset, int length) {
        opened().append(" inline=").append(offset).append("+").append(length);
    }

    @Override
    protected void driverCloseWr() {
        opened();
        open = null;
    }

    @Override
    protected void driverComplete() {
        if (open != null) {
            throw new AssertionError("doorbell with " + open + " open");
        }
        batch.forEach(w -> posted.add(w.toString()));
        batch.clear();
    }

    @Override
    protected void driverAbort() {
        batch.clear();
        open = null;
    }

    private StringBuilder opened() {
        if (open == null) {
            throw new AssertionError("no WR open");
        }
        return open;
    }
}
