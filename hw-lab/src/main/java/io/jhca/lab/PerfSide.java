package io.jhca.lab;

import io.jhca.memory.DmaRegion;
import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionChannel;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.CqFlags;
import io.jhca.verbs.DeviceAttributes;
import io.jhca.verbs.Gid;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.PortAttributes;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SharedReceiveQueue;
import io.jhca.verbs.SrqInitAttributes;
import io.jhca.verbs.VerbsException;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.concurrent.ThreadLocalRandom;

/**
 * One side of a perf run: device, buffer, CQs and QPs laid out as perftest lays them out
 * (perftest_resources.c ctx_init, set_up_connection): one buffer of 2 x num_qps slots of
 * BUFF_SIZE = max(message size, cycle buffer) bytes; QP i sends from slot i and advertises slot num_qps + i
 * for the peer to write into or read from.
 */
public final class PerfSide implements AutoCloseable {
    final PerfParams p;
    final Context ctx;
    final PortAttributes port;
    final DeviceAttributes dev;
    final int gidIndex;
    final Gid gid;
    final Waiter waiter;

    int txDepth;
    int rxDepth;
    int inlineSize;
    int outReads;
    int cqMod;
    int slot;
    int cycleBuffer;
    int cacheLine;
    Mtu mtu;
    ProtectionDomain pd;
    DmaRegion mem;
    MemoryRegion mr;
    UnsafeBuffer buf;
    CompletionQueue sendCq;
    CompletionQueue recvCq;
    /** -e: one channel per CQ, as perftest's send_channel and recv_channel; null without -e. */
    CompletionChannel sendChannel;
    CompletionChannel recvChannel;
    QueuePair[] qps;
    /** --use-srq on a side that receives: the SRQ every QP takes its receives from, else null. */
    SharedReceiveQueue srq;
    PerftestDest[] mine;
    PerftestDest[] remote;
    /** -R: the rdma_cm connections (test QPs, then the exchange QP), closed first; null otherwise. */
    PerfCm cm;
    PerftestWire cmLink;
    /** --mcg: the group (the server's QPs are attached to it), else null. */
    Gid mgid;
    /** --mcg client: the address handle of the group each send goes to, else null. */
    AddressHandle[] ahs;
    private boolean cmAttached;

    PerfSide(PerfParams p, String device) {
        this(p, Devices.open(device));
    }

    /** A side on a device already open, which this side now owns (closes). */
    PerfSide(PerfParams p, Context opened) {
        this.p = p;
        this.ctx = opened;
        try {
            this.port = ctx.queryPort(p.ibPort());
            this.dev = ctx.queryDevice();
            this.gidIndex = GidChoice.choose(ctx, p.ibPort(), p.gidIndex());
            this.gid = ctx.queryGid(p.ibPort(), gidIndex);
            this.waiter = new Waiter(ctx, p.stallMillis()).events(p.events());
            PerfTest t = p.test();
            txDepth = p.txDepth() > 0 ? p.txDepth() : t.defaultTxDepth();
            rxDepth = p.rxDepth() > 0 ? p.rxDepth() : t.defaultRxDepth();
            if (t.verb() == PerfTest.Verb.SEND && !p.durationMode()) {
                rxDepth = Math.min(rxDepth, p.iters()); // perftest: rx_depth is at most iters
            }
            cqMod = Math.max(1, Math.min(p.cqMod(), txDepth)); // perftest caps cq_mod at tx_depth
            int inline = p.inlineSize() >= 0 ? p.inlineSize() : t.defaultInline();
            if (p.inlineSize() >= 0 && inline > dev.maxInlineData()) {
                throw new VerbsException(VerbsException.EINVAL, "-I " + inline + " exceeds the max inline data "
                        + dev.maxInlineData() + " of " + ctx.name());
            }
            inlineSize = t.verb() == PerfTest.Verb.READ || t.verb() == PerfTest.Verb.ATOMIC ? 0
                    : Math.min(inline, dev.maxInlineData());
            if (p.mcg()) {
                inlineSize = Math.min(inlineSize, PerfMcast.MAX_INLINE_UD);
                mgid = PerfMcast.mgid(p.mgid(), p.role() == PerfParams.Role.CLIENT);
                if (receives() && mgid.isIpv4Mapped() != gid.isIpv4Mapped()) {
                    // the group is joined on the interface of the GID's address, which has one IP version
                    throw new VerbsException(VerbsException.EINVAL, "--mcg: the group " + Inet6Text.format(mgid.bytes())
                            + (p.mgid() == null ? " (perftest's default MGID)" : "") + " and GID index " + gidIndex + " ("
                            + Inet6Text.format(gid.bytes()) + ") of " + ctx.name() + " are not of the same IP version:"
                            + " give -M a group of the GID's version, e.g. -M 0:0:0:0:0:0:0:0:0:0:255:255:239:1:1:1 for"
                            + " an IPv4 GID, or -x an IPv6 GID");
                }
            }
            // ctx_set_out_reads: the device maximum for READ/ATOMIC tests, 1 otherwise
            outReads = t.usesOutReads() ? Math.max(1, Math.min(dev.maxQpRdAtom(), 0xFFFF)) : 1;
        } catch (RuntimeException e) {
            ctx.close();
            throw e;
        }
    }

    /** -R: lets rdma_cm use this side's device; {@link #close} undoes it. */
    void attachCm() {
        io.jhca.cm.CmDevices.attach(ctx);
        cmAttached = true;
    }

    /** The MTU this side offers: -m, else the port's active MTU (set_mtu). */
    Mtu localMtu() {
        if (p.mtu() == 0) {
            return port.activeMtu();
        }
        Mtu m = Mtu.ofBytes(p.mtu());
        if (m.bytes() > port.activeMtu().bytes()) {
            throw new VerbsException(VerbsException.EINVAL, "MTU " + m.bytes() + " is larger than the active MTU "
                    + port.activeMtu().bytes() + " of " + ctx.name() + " port " + p.ibPort());
        }
        return m;
    }

    /**
     * Creates the resources once the cycle buffer and cache line size (both from check_sys_data) and the path
     * MTU (check_mtu) are agreed, and moves the QPs to INIT.
     */
    void create(int cycleBuffer, int cacheLine, Mtu pathMtu) {
        createResources(cycleBuffer, cacheLine, pathMtu);
        for (int i = 0; i < qps.length; i++) {
            qps[i] = pd.createQp(qpInit());
            if (ud()) {
                qps[i].modify(QpAttributes.toInitUd(p.ibPort(), PerfMcast.DEF_QKEY));
            } else {
                qps[i].modify(new QpAttributes().state(QpState.INIT).pkeyIndex(0).port(p.ibPort()).accessFlags(p.test().qpAccess()));
            }
        }
        describeQps();
        if (p.mcg() && receives()) {
            // send_set_up_connection: the server attaches every QP and advertises the group, MLID and QPN 0xFFFFFF
            // as its keys; RoCE has no SA to join through, so the MLID stays 0 (set_mcast_group joins on IB only)
            for (int i = 0; i < qps.length; i++) {
                qps[i].attachMcast(mgid, 0);
                mine[i] = new PerftestDest(0, mine[i].outReads(), QueuePair.MULTICAST_QPN, mine[i].psn(), mine[i].rkey(),
                        mine[i].vaddr(), mgid, 0);
            }
        }
    }

    /** --mcg runs on UD QPs; everything else on RC. */
    boolean ud() {
        return p.mcg();
    }

    /**
     * The message sizes this side runs: a UD message is at most one MTU, so larger sizes become the MTU and -a stops
     * there (send_bw.c: "Max msg size in UD is MTU", size_max_pow for UD).
     */
    java.util.List<Integer> sizes() {
        java.util.List<Integer> all = p.sizes();
        if (!ud()) {
            return all;
        }
        java.util.List<Integer> s = new java.util.ArrayList<>();
        for (int size : all) {
            int v = Math.min(size, mtu.bytes());
            if (!s.contains(v)) {
                s.add(v);
            }
        }
        return s;
    }

    /** The length of a receive for a message of {@code size} bytes: with the GRH on UD. */
    int recvLength(int size) {
        return ud() ? size + PerfMcast.UD_ADDITION : size;
    }

    /**
     * Everything but the QPs: with -R rdma_cm creates those ({@link PerfCm}), on the PD and CQs made here.
     */
    void createResources(int cycleBuffer, int cacheLine, Mtu pathMtu) {
        this.mtu = pathMtu;
        this.cycleBuffer = cycleBuffer;
        this.cacheLine = Math.max(1, cacheLine);
        int n = p.numQps();
        // a UD receive starts with the 40-byte GRH (perftest SIZE(UD, size, 1))
        long slotL = Math.max((long) p.maxSize() + (ud() ? PerfMcast.UD_ADDITION : 0), cycleBuffer);
        if (slotL * 2 * n > Integer.MAX_VALUE) {
            throw new VerbsException(VerbsException.EINVAL, "buffer of 2 x " + n + " x " + slotL + " bytes is too large");
        }
        slot = (int) slotL;
        pd = ctx.allocatePd();
        mem = LabMemory.allocate(ctx, 2L * n * slot);
        mr = pd.register(mem, 0, 2L * n * slot, p.test().mrAccess());
        buf = mem.buffer(0, 2 * n * slot);
        int maxCqe = dev.maxCqe();
        // one thread drives every object of a run: single-threaded objects, no locks
        if (p.events()) {
            sendChannel = ctx.createCompletionChannel();
            recvChannel = ctx.createCompletionChannel();
        }
        sendCq = ctx.createCq(Math.min(maxCqe, Math.max(1, txDepth * n)), sendChannel, CqFlags.SINGLE_THREADED);
        recvCq = ctx.createCq(Math.min(maxCqe, Math.max(1, rxDepth * n)), recvChannel, CqFlags.SINGLE_THREADED);
        qps = new QueuePair[n];
        mine = new PerftestDest[n];
        // perftest ctx_init: with --use-srq an SRQ of rx_depth WRs on the sides that receive (both in latency tests,
        // the server in BW)
        if (p.useSrq() && p.test().verb() == PerfTest.Verb.SEND && (p.test().latency() || receives())) {
            srq = pd.createSrq(SrqInitAttributes.create().maxWr(Math.min(dev.maxSrqWr(), rxDepth)).maxSge(1));
        }
    }

    /** The attributes every test QP is created with. */
    QpInitAttributes qpInit() {
        return (ud() ? QpInitAttributes.ud(sendCq, recvCq) : QpInitAttributes.rc(sendCq, recvCq)).singleThreaded().maxSendWr(txDepth)
                .maxRecvWr(p.test().verb() == PerfTest.Verb.SEND ? rxDepth : 1).maxInlineData(inlineSize).srq(srq);
    }

    /** set_up_connection: this side's key message for each QP (with -R the PSN is only printed: rdma_cm picks its own). */
    void describeQps() {
        int n = qps.length;
        for (int i = 0; i < n; i++) {
            mine[i] = new PerftestDest(port.lid(), outReads, qps[i].qpn(), ThreadLocalRandom.current().nextInt(1 << 24),
                    mr.rkey(), mr.address() + (long) (n + i) * slot, gid, 0);
        }
    }

    /** True on the side that receives in a bandwidth test: the server (in-process: the server's side). */
    private boolean receives() {
        return p.role() == PerfParams.Role.SERVER;
    }

    /** Receives posted for each QP: rx_depth, or with an SRQ rx_depth / num_qps (perftest size_per_qp). */
    int recvPerQp() {
        return srq != null ? Math.max(1, rxDepth / qps.length) : rxDepth;
    }

    /** Posts a receive for QP {@code qp}: to the SRQ when there is one ({@code ibv_post_srq_recv}), else to the QP. */
    int postRecv(QueuePair qp, RecvWr wr) {
        return srq != null ? srq.postRecv(wr) : qp.postRecv(wr);
    }

    /** Offset of QP i's send slot and receive (remotely written) slot in {@link #buf}. */
    int sendSlot(int i) {
        return i * slot;
    }

    int recvSlot(int i) {
        return (p.numQps() + i) * slot;
    }

    /**
     * ctx_connect for RC: RTR with the peer's QPN/PSN, an AV with hop_limit 0xFF and the chosen GID index,
     * max_dest_rd_atomic = own out_reads, min_rnr_timer 12; RTS with timeout -u, retry_cnt 7, rnr_retry 7 and
     * max_rd_atomic = the peer's out_reads (perftest_resources.c ctx_modify_qp_to_rtr/rts).
     */
    void connect() {
        if (ud()) {
            connectUd();
            return;
        }
        for (int i = 0; i < qps.length && cm == null; i++) {
            PerftestDest r = remote[i];
            if (r.gid() == null || r.gid().isZero()) {
                throw new VerbsException(VerbsException.EINVAL, "the peer sent no GID: RoCE needs one (run perftest with -x)");
            }
            AhAttributes av = AhAttributes.to(r.gid()).sgidIndex(gidIndex).hopLimit(0xFF).sl(p.sl()).portNum(p.ibPort())
                    .dlid(r.lid());
            qps[i].modify(QpAttributes.toRtr(r.qpn(), r.psn(), av, mtu).maxDestRdAtomic(Math.min(outReads, dev.maxQpRdAtom())));
            qps[i].modify(QpAttributes.toRts(mine[i].psn()).timeout(p.qpTimeout())
                    .maxRdAtomic(Math.max(1, Math.min(r.outReads(), dev.maxQpInitRdAtom()))));
        }
        if (p.events()) {
            // send_lat.c and friends: both CQs armed once connected; every event taken re-arms its CQ
            sendCq.requestNotify(false);
            recvCq.requestNotify(false);
        }
    }

    /**
     * ctx_connect for UD: RTR, RTS with the own PSN; the client makes an address handle to the server's GID (with
     * --mcg the group) with hop limit 0xFF, its sends carry the server's QPN (0xFFFFFF) and DEF_QKEY.
     */
    private void connectUd() {
        ahs = new AddressHandle[qps.length];
        for (int i = 0; i < qps.length; i++) {
            qps[i].modify(QpAttributes.toRtrUd());
            qps[i].modify(QpAttributes.toRtsUd(mine[i].psn()));
            if (!receives()) {
                PerftestDest r = remote[i];
                if (r.gid() == null || r.gid().isZero()) {
                    throw new VerbsException(VerbsException.EINVAL, "the peer sent no GID: RoCE needs one (run perftest with -x)");
                }
                ahs[i] = pd.createAh(AhAttributes.to(r.gid()).sgidIndex(gidIndex).hopLimit(0xFF).sl(p.sl())
                        .portNum(p.ibPort()).dlid(r.lid()));
            }
        }
        if (p.events()) {
            sendCq.requestNotify(false);
            recvCq.requestNotify(false);
        }
    }

    @Override
    public void close() {
        RuntimeException first = null;
        if (cmAttached) {
            try {
                if (cm != null) {
                    cm.close();
                }
                if (cmLink != null) {
                    cmLink.close();
                }
            } catch (Exception e) {
                first = new IllegalStateException("closing the rdma_cm connections: " + e.getMessage(), e);
            } finally {
                io.jhca.cm.CmDevices.detach(ctx);
            }
        }
        if (mgid != null && qps != null) {
            for (QueuePair q : qps) {
                if (q != null && q.multicastGroups().contains(mgid)) {
                    try {
                        q.detachMcast(mgid, 0); // send_destroy_ctx
                    } catch (RuntimeException e) {
                        first = first == null ? e : first;
                    }
                }
            }
        }
        AutoCloseable[] all = new AutoCloseable[(qps == null ? 0 : qps.length) + (ahs == null ? 0 : ahs.length) + 9];
        int k = 0;
        if (ahs != null) {
            for (AddressHandle ah : ahs) {
                all[k++] = ah;
            }
        }
        if (qps != null) {
            for (QueuePair q : qps) {
                all[k++] = q;
            }
        }
        all[k++] = srq;
        all[k++] = sendCq;
        all[k++] = recvCq;
        all[k++] = sendChannel;
        all[k++] = recvChannel;
        all[k++] = mr;
        all[k++] = mem;
        all[k++] = pd;
        all[k] = ctx;
        for (AutoCloseable c : all) {
            if (c == null) {
                continue;
            }
            try {
                c.close();
            } catch (Exception e) {
                if (first == null) {
                    first = e instanceof RuntimeException ? (RuntimeException) e : new IllegalStateException(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
