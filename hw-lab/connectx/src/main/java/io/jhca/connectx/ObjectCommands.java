package io.jhca.connectx;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import io.jhca.mlx5.cmd.CmdStatus;
import io.jhca.mlx5.cmd.CqLayouts;
import io.jhca.mlx5.cmd.Field;
import io.jhca.mlx5.cmd.Layout;
import io.jhca.mlx5.cmd.MkeyLayouts;
import io.jhca.rxe.RxeKeys;
import io.jhca.verbs.MwType;
import io.jhca.mlx5.cq.Cqe64;
import io.jhca.mlx5.eq.Eqe;
import io.jhca.verbs.Access;
import io.jhca.verbs.CompletionQueue;

/**
 * ALLOC/DEALLOC_UAR, ALLOC/DEALLOC_PD, CREATE/DESTROY_EQ, CREATE/DESTROY_MKEY and CREATE/DESTROY_CQ: each checks the
 * context fields against what the model supports and the referenced objects, resolves every buffer the driver names
 * (PAS pages, MTT pages, doorbell records) through the IOMMU once, and mirrors PDs, keys and CQs on the rxe side.
 */
final class ObjectCommands {

    /** rxe_param.h RXE_MAX_LOG_CQE 15: the rxe CQ behind an mlx5 CQ is at most this deep. */
    static final int RXE_MAX_CQE = (1 << 15) - 1;

    private final DeviceState st;
    private final DataPath dataPath;

    ObjectCommands(DeviceState st, DataPath dataPath) {
        this.st = st;
        this.dataPath = dataPath;
    }

    // ------------------------------------------------------------------------------------------ UAR

    void allocUar(MutableDirectBuffer o, Layout out) throws CmdError {
        for (int u = 1; u < ModelCaps.BAR0_PAGES; u++) { // page 0 is the initialization segment
            if (!st.uarAllocated[u]) {
                st.uarAllocated[u] = true;
                out.set(o, 0, "uar", u);
                return;
            }
        }
        throw new CmdError(CmdStatus.NO_RES_ERR, CmdSyndromes.UAR_EXHAUSTED, "all " + (ModelCaps.BAR0_PAGES - 1)
                + " UAR pages are allocated");
    }

    void deallocUar(DirectBuffer i, Layout in) throws CmdError {
        int u = uar(in.get(i, 0, "uar"));
        if (st.uarUsers[u] > 0) {
            throw new CmdError(CmdStatus.RES_BUSY, CmdSyndromes.OBJECT_IN_USE, "UAR " + u + " is used by "
                    + st.uarUsers[u] + " queues");
        }
        st.uarAllocated[u] = false;
    }

    int uar(long u) throws CmdError {
        if (u < 1 || u >= ModelCaps.BAR0_PAGES || !st.uarAllocated[(int) u]) {
            throw CmdError.badResource(CmdSyndromes.BAD_UAR, "UAR " + u + " is not allocated");
        }
        return (int) u;
    }

    // ------------------------------------------------------------------------------------------ PD

    void allocPd(MutableDirectBuffer o, Layout out) throws CmdError {
        int n = st.pds.nextFree();
        if (n < 0) {
            throw new CmdError(CmdStatus.NO_RES_ERR, CmdSyndromes.TABLE_FULL, "no free PD number");
        }
        st.pds.put(n, new DevicePd(n, st.rxe.context.allocatePd()));
        out.set(o, 0, "pd", n);
    }

    void deallocPd(DirectBuffer i, Layout in) throws CmdError {
        DevicePd pd = pd(in.get(i, 0, "pd"));
        if (pd.users > 0) {
            throw new CmdError(CmdStatus.RES_BUSY, CmdSyndromes.OBJECT_IN_USE, "PD " + pd.pdn + " has " + pd.users
                    + " keys and QPs");
        }
        st.pds.remove(pd.pdn);
        pd.rxePd.close();
    }

    DevicePd pd(long n) throws CmdError {
        DevicePd pd = n > 0 && n <= 0xffffff ? st.pds.get((int) n) : null;
        if (pd == null) {
            throw CmdError.badResource(CmdSyndromes.BAD_PD, "PD " + n + " does not exist");
        }
        return pd;
    }

    // ------------------------------------------------------------------------------------------ EQ

    void createEq(DeviceCommand cmd, DirectBuffer i, MutableDirectBuffer o, Layout in, Layout out) throws CmdError {
        String c = "eq_context_entry.";
        int logSize = (int) in.get(i, 0, c + "log_eq_size");
        if (logSize > ModelCaps.LOG_MAX_EQ_SZ) {
            throw CmdError.badParam(CmdSyndromes.EQ_SIZE, "log_eq_size " + logSize + " > " + ModelCaps.LOG_MAX_EQ_SZ);
        }
        int uar = uar(in.get(i, 0, c + "uar_page"));
        if (in.get(i, 0, c + "page_offset") != 0) {
            throw CmdError.badParam(CmdSyndromes.PAGE_OFFSET_UNSUPPORTED, "eqc.page_offset must be 0");
        }
        PagedBuffer ring = ring(cmd, i, in, (int) in.get(i, 0, c + "log_page_size"), (long) Eqe.SIZE << logSize);
        Field maskField = in.field("event_bitmask");
        long[] mask = new long[4];
        for (int w = 0; w < 4; w++) {
            mask[w] = maskField.getElement(i, 0, w); // four be64 words; type t is bit t % 64 of word t / 64
        }
        int eqn = st.eqs.nextFree();
        if (eqn < 0) {
            throw new CmdError(CmdStatus.NO_RES_ERR, CmdSyndromes.TABLE_FULL, "no free EQ number");
        }
        st.eqs.put(eqn, new DeviceEq(eqn, logSize, uar, ring, mask, (int) in.get(i, 0, c + "intr"), st));
        st.uarUsers[uar]++;
        out.set(o, 0, "eq_number", eqn);
    }

    void destroyEq(DirectBuffer i, Layout in) throws CmdError {
        DeviceEq eq = eq(in.get(i, 0, "eq_number"));
        if (eq.users > 0) {
            throw new CmdError(CmdStatus.RES_BUSY, CmdSyndromes.OBJECT_IN_USE, "EQ " + eq.eqn + " has " + eq.users
                    + " CQs");
        }
        st.eqs.remove(eq.eqn);
        st.uarUsers[eq.uar]--;
    }

    DeviceEq eq(long n) throws CmdError {
        DeviceEq eq = n >= 0 && n < 256 ? st.eqs.get((int) n) : null;
        if (eq == null) {
            throw CmdError.badResource(CmdSyndromes.BAD_EQN, "EQ " + n + " does not exist");
        }
        return eq;
    }

    // ------------------------------------------------------------------------------------------ memory keys

    void createMkey(DeviceCommand cmd, DirectBuffer i, MutableDirectBuffer o, Layout in, Layout out)
            throws CmdError {
        String m = "memory_key_mkey_entry.";
        if (in.get(i, 0, "mkey_umem_valid") != 0) {
            throw CmdError.badParam(CmdSyndromes.UMEM_UNSUPPORTED, "umem keys are not modelled");
        }
        long mode = in.get(i, 0, m + "access_mode_4_2") << 2 | in.get(i, 0, m + "access_mode_1_0");
        if (mode == MkeyLayouts.ACCESS_MODE_KLMS && in.get(i, 0, m + "free") != 0 && in.get(i, 0, m + "umr_en") != 0) {
            createWindowMkey(i, o, in, out);
            return;
        }
        if (mode != MkeyLayouts.ACCESS_MODE_MTT) {
            throw CmdError.badParam(CmdSyndromes.MKEY_ACCESS_MODE, "access mode " + mode
                    + " (the model implements MTT keys, mode 1)");
        }
        if (in.get(i, 0, m + "free") != 0 || in.get(i, 0, m + "umr_en") != 0) {
            throw CmdError.badParam(CmdSyndromes.MKEY_FREE_UNSUPPORTED, "free/UMR keys are not modelled");
        }
        DevicePd pd = pd(in.get(i, 0, m + "pd"));
        long start = in.get(i, 0, m + "start_addr");
        long len = in.get(i, 0, m + "len");
        if (in.get(i, 0, m + "length64") != 0 || len <= 0 || len > (1L << ModelCaps.LOG_MAX_MRW_SZ)) {
            throw CmdError.badParam(CmdSyndromes.MKEY_LENGTH, "key length " + Long.toUnsignedString(len)
                    + " (1 .. 2^" + ModelCaps.LOG_MAX_MRW_SZ + ", no length64)");
        }
        int shift = (int) in.get(i, 0, m + "log_page_size"); // the full page shift for mkeys (rdma-core: page_shift)
        if (shift < 12 || shift > 30) {
            throw CmdError.badParam(CmdSyndromes.MKEY_PAGE_SIZE, "mkc.log_page_size " + shift + " (12..30)");
        }
        long pg = 1L << shift;
        long first = start & (pg - 1);
        long npages = (first + len + pg - 1) >>> shift;
        long available = (cmd.inLength() - in.sizeBytes()) / 8;
        if (npages > available || in.get(i, 0, m + "translations_octword_size") < (npages + 1) / 2) {
            throw CmdError.badParam(CmdSyndromes.MKEY_MTT_SHORT, npages + " MTT entries needed, "
                    + available + " given, translations_octword_size "
                    + in.get(i, 0, m + "translations_octword_size"));
        }
        Field mtt = in.flexibleArray();
        long[] hostPages = new long[(int) npages];
        for (int k = 0; k < npages; k++) {
            long e = mtt.getElement(i, 0, k); // be64: page address | MLX5_MTT_PERM_* in the low bits
            if ((e & (pg - 1) & ~MkeyLayouts.MTT_PERM_RW) != 0) {
                throw CmdError.badParam(CmdSyndromes.MKEY_MTT_MISALIGNED, String.format(
                        "MTT[%d] 0x%x is not aligned to the key's %d-byte pages", k, e, pg));
            }
            long page = e & ~MkeyLayouts.MTT_PERM_RW;
            long from = k == 0 ? first : 0;
            long to = k == npages - 1 ? first + len - ((long) k << shift) : pg;
            long h = st.iommu.hostAddress(page + from, to - from);
            if (h < 0) {
                throw CmdError.badParam(CmdSyndromes.MKEY_MTT_NOT_MAPPED, String.format(
                        "MTT[%d] page 0x%x [+%d, +%d) is not DMA-mapped", k, page, from, to));
            }
            hostPages[k] = h - from;
        }
        int index = st.mkeys.nextFree();
        if (index < 0) {
            throw new CmdError(CmdStatus.NO_RES_ERR, CmdSyndromes.TABLE_FULL, "no free mkey index");
        }
        boolean lw = in.get(i, 0, m + "lw") != 0;
        boolean rr = in.get(i, 0, m + "rr") != 0;
        boolean rw = in.get(i, 0, m + "rw") != 0;
        boolean a = in.get(i, 0, m + "a") != 0;
        int key = index << 8 | (int) in.get(i, 0, m + "mkey_7_0");
        DeviceMkey k = new DeviceMkey(index, key, pd, start, len, shift, hostPages, lw, rr, rw, a);
        // verbs wants LOCAL_WRITE with remote write/atomic; the model checks lw itself on the send side
        // MW_BIND always: the mkc has no bind right, a ConnectX binds windows to any key of the PD (the verbs
        // rules on the MR's rights are the driver's, checked when the bind is posted)
        int access = (lw || rw || a ? Access.LOCAL_WRITE.bit() : 0) | (rr ? Access.REMOTE_READ.bit() : 0)
                | (rw ? Access.REMOTE_WRITE.bit() : 0) | (a ? Access.REMOTE_ATOMIC.bit() : 0) | Access.MW_BIND.bit();
        k.rxeMr = st.rxe.register(pd.rxePd, start, len, shift, hostPages, access, key);
        st.mkeys.put(index, k);
        pd.users++;
        out.set(o, 0, "mkey_index", index);
    }

    /**
     * A memory window's key, as mlx5_ib_alloc_mw creates it (free, umr_en, KLM mode, en_rinval for type 2): mirrored
     * as an rxe window under the same key, unbound until a UMR WQE binds it.
     */
    private void createWindowMkey(DirectBuffer i, MutableDirectBuffer o, Layout in, Layout out) throws CmdError {
        String m = "memory_key_mkey_entry.";
        DevicePd pd = pd(in.get(i, 0, m + "pd"));
        if (in.get(i, 0, m + "translations_octword_size") < 1) {
            throw CmdError.badParam(CmdSyndromes.MKEY_MTT_SHORT, "a window key needs room for a KLM"
                    + " (translations_octword_size 0)");
        }
        int index = st.mkeys.nextFree();
        if (index < 0) {
            throw new CmdError(CmdStatus.NO_RES_ERR, CmdSyndromes.TABLE_FULL, "no free mkey index");
        }
        int key = index << 8 | (int) in.get(i, 0, m + "mkey_7_0");
        DeviceMkey k = new DeviceMkey(index, key, pd, 0, 0, 12, new long[0], false, false, false, false);
        MwType type = in.get(i, 0, m + "en_rinval") != 0 ? MwType.TYPE_2 : MwType.TYPE_1;
        k.rxeMw = RxeKeys.allocMw(pd.rxePd, type, key);
        st.mkeys.put(index, k);
        pd.users++;
        out.set(o, 0, "mkey_index", index);
    }

    /**
     * Undoes the binds of windows whose last bind named {@code mr} (destroyed): a window bound to a key that no
     * longer exists grants nothing, so its rxe mirror is replaced by a fresh one under the same key.
     */
    void unbindWindowsOf(DeviceMkey mr) {
        if (mr.rxeMr == null || mr.rxeMr.boundWindows() == 0) {
            return;
        }
        for (DeviceMkey w : st.mkeys.values()) {
            if (w.isWindow() && w.lastBind == mr) {
                MwType type = w.rxeMw.type();
                w.rxeMw.close();
                w.rxeMw = RxeKeys.allocMw(w.pd.rxePd, type, w.key);
                w.lastBind = null;
            }
        }
    }

    void destroyMkey(DirectBuffer i, Layout in) throws CmdError {
        long index = in.get(i, 0, "mkey_index");
        DeviceMkey k = index > 0 && index <= 0xffffff ? st.mkeys.get((int) index) : null;
        if (k == null) {
            throw CmdError.badResource(CmdSyndromes.BAD_MKEY, "mkey index " + index + " does not exist");
        }
        st.mkeys.remove(k.index);
        k.pd.users--;
        if (k.isWindow()) {
            k.rxeMw.close();
        } else {
            unbindWindowsOf(k);
            RxeMirror.deregister(k.rxeMr);
        }
        k.rxeMr = null;
        k.valid = false;
    }

    // ------------------------------------------------------------------------------------------ CQ

    void createCq(DeviceCommand cmd, DirectBuffer i, MutableDirectBuffer o, Layout in, Layout out) throws CmdError {
        String c = "cq_context.";
        if (in.get(i, 0, "cq_umem_valid") != 0 || in.get(i, 0, c + "dbr_umem_valid") != 0) {
            throw CmdError.badParam(CmdSyndromes.UMEM_UNSUPPORTED, "umem CQs are not modelled");
        }
        int logSize = (int) in.get(i, 0, c + "log_cq_size");
        if (logSize > ModelCaps.LOG_MAX_CQ_SZ) {
            throw CmdError.badParam(CmdSyndromes.CQ_SIZE, "log_cq_size " + logSize + " > " + ModelCaps.LOG_MAX_CQ_SZ);
        }
        long sz = in.get(i, 0, c + "cqe_sz");
        if (sz != CqLayouts.CQE_SZ_64 && sz != CqLayouts.CQE_SZ_128) {
            throw CmdError.badParam(CmdSyndromes.CQE_SIZE, "cqe_sz " + sz + " (0 = 64, 1 = 128 bytes)");
        }
        if (in.get(i, 0, c + "cc") != 0 || in.get(i, 0, c + "cqe_comp_en") != 0 || in.get(i, 0, c + "apu_cq") != 0) {
            throw CmdError.badParam(CmdSyndromes.CQ_FEATURE_UNSUPPORTED, "collapsed, compressed and APU CQs are "
                    + "not modelled");
        }
        if (in.get(i, 0, c + "page_offset") != 0) {
            throw CmdError.badParam(CmdSyndromes.PAGE_OFFSET_UNSUPPORTED, "cqc.page_offset must be 0");
        }
        int uar = uar(in.get(i, 0, c + "uar_page"));
        DeviceEq eq = eq(in.get(i, 0, c + "c_eqn_or_apu_element"));
        int cqeSize = sz == CqLayouts.CQE_SZ_64 ? Cqe64.SIZE : 2 * Cqe64.SIZE;
        PagedBuffer ring = ring(cmd, i, in, (int) in.get(i, 0, c + "log_page_size"), (long) cqeSize << logSize);
        long dbrHost = dbr(in.get(i, 0, c + "dbr_addr"));
        int cqn = st.cqs.nextFree();
        if (cqn < 0) {
            throw new CmdError(CmdStatus.NO_RES_ERR, CmdSyndromes.TABLE_FULL, "no free CQ number");
        }
        int n = 1 << logSize;
        CompletionQueue rxeCq = st.rxe.context.createCq(Math.min(RXE_MAX_CQE, Math.max(1024, 4 * n)));
        DeviceCq cq = new DeviceCq(cqn, logSize, cqeSize, uar, ring, dbrHost, eq, in.get(i, 0, c + "oi") != 0, rxeCq,
                st.counters, st::reportCqError);
        st.cqs.put(cqn, cq);
        st.cqList.add(cq);
        eq.users++;
        st.uarUsers[uar]++;
        out.set(o, 0, "cqn", cqn);
    }

    void destroyCq(DirectBuffer i, Layout in) throws CmdError {
        DeviceCq cq = cq(in.get(i, 0, "cqn"));
        if (cq.users > 0) {
            throw new CmdError(CmdStatus.RES_BUSY, CmdSyndromes.OBJECT_IN_USE, "CQ " + cq.cqn + " is used by "
                    + cq.users + " QPs");
        }
        dataPath.drain(cq);
        release(cq);
    }

    private void release(DeviceCq cq) {
        st.cqs.remove(cq.cqn);
        st.cqList.remove(cq);
        cq.eq.users--;
        st.uarUsers[cq.uar]--;
        cq.error = true;
        cq.rxeCq.close();
    }

    DeviceCq cq(long n) throws CmdError {
        DeviceCq cq = n > 0 && n <= 0xffffff ? st.cqs.get((int) n) : null;
        if (cq == null) {
            throw CmdError.badResource(CmdSyndromes.BAD_CQN, "CQ " + n + " does not exist");
        }
        return cq;
    }

    // ------------------------------------------------------------------------------------------ shared

    /** The queue's pages from the command's trailing PAS array (entries present = what the input length holds). */
    PagedBuffer ring(DeviceCommand cmd, DirectBuffer i, Layout in, int logPageSize, long bytes) throws CmdError {
        int available = (cmd.inLength() - in.sizeBytes()) / 8;
        try {
            return PagedBuffer.resolve(st.iommu, i, in.flexibleArray(), Math.max(0, available), logPageSize, bytes);
        } catch (PagedBuffer.Fault f) {
            throw CmdError.badParam(f.syndrome, f.getMessage());
        }
    }

    /** A doorbell record: 8 bytes, 8-byte aligned, DMA-mapped; its host address. */
    long dbr(long iova) throws CmdError {
        long h = (iova & 7) == 0 ? st.iommu.hostAddress(iova, 8) : -1;
        if (h < 0) {
            throw CmdError.badParam(CmdSyndromes.DBR_NOT_MAPPED, String.format(
                    "doorbell record 0x%x is not 8-byte aligned DMA-mapped memory", iova));
        }
        return h;
    }

    /** TEARDOWN_HCA / close: every object goes, children first; the rxe mirrors are closed. */
    void destroyAll(QpCommands qps) {
        qps.destroyAll();
        for (DeviceCq cq : st.cqs.values()) {
            dataPath.drain(cq);
            release(cq);
        }
        for (DeviceMkey k : st.mkeys.values()) {
            if (k.isWindow()) {   // windows first: an rxe MR with windows bound refuses to go
                st.mkeys.remove(k.index);
                k.pd.users--;
                k.rxeMw.close();
                k.valid = false;
            }
        }
        for (DeviceMkey k : st.mkeys.values()) {
            st.mkeys.remove(k.index);
            k.pd.users--;
            RxeMirror.deregister(k.rxeMr);
            k.valid = false;
        }
        for (DeviceEq eq : st.eqs.values()) {
            st.eqs.remove(eq.eqn);
            st.uarUsers[eq.uar]--;
        }
        for (DevicePd pd : st.pds.values()) {
            st.pds.remove(pd.pdn);
            pd.rxePd.close();
        }
        for (QCounterSet set : st.qCounters.values()) {
            st.qCounters.remove(set.id);
        }
        java.util.Arrays.fill(st.uarAllocated, false);
        java.util.Arrays.fill(st.uarUsers, 0);
        for (int g = 0; g < st.gids.length; g++) {
            st.gids[g] = null;
        }
    }
}
