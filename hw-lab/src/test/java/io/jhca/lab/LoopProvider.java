package io.jhca.lab;

import io.jhca.memory.DmaRegion;
import io.jhca.verbs.Access;
import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.DeviceAttributes;
import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.Gid;
import io.jhca.verbs.LinkLayer;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.PortAttributes;
import io.jhca.verbs.PortState;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttrMask;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpCapabilities;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;
import io.jhca.verbs.spi.Provider;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.lang.invoke.VarHandle;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test-only provider: two devices, loop0 (127.0.0.1) and loop1 (127.0.0.2), whose QPs execute every work
 * request at once, in the poster's thread, by copying between registered memory of this JVM. No wire protocol
 * at all: it exists so the tools' exchange, loops and reports can be tested end to end while (and wherever)
 * the rxe provider is not available. It checks keys, access rights and bounds like a real HCA, so a tool that
 * advertises the wrong rkey or address fails here too.
 */
public final class LoopProvider implements Provider {
    static final Object LOCK = new Object();
    static final AtomicInteger QPNS = new AtomicInteger(0x11);
    static final AtomicInteger KEYS = new AtomicInteger(0x100);
    static final AtomicInteger CQNS = new AtomicInteger(1);
    static final Map<Integer, LoopQp> QP_TABLE = new ConcurrentHashMap<>();
    static final Map<Integer, LoopMr> MR_TABLE = new ConcurrentHashMap<>();

    static final DeviceInfo LOOP0 = new DeviceInfo("loop0", "loop", 0x0200_00ff_fe00_0001L, "InfiniBand");
    static final DeviceInfo LOOP1 = new DeviceInfo("loop1", "loop", 0x0200_00ff_fe00_0002L, "InfiniBand");

    @Override
    public String name() {
        return "loop";
    }

    @Override
    public List<DeviceInfo> devices() {
        return List.of(LOOP0, LOOP1);
    }

    @Override
    public Context open(DeviceInfo device) {
        return new LoopContext(device, device == LOOP0 || device.name().equals("loop0") ? "127.0.0.1" : "127.0.0.2");
    }

    static final class LoopContext extends Context {
        private final Gid[] gids;
        private final DeviceAttributes attrs;

        LoopContext(DeviceInfo info, String ip) {
            super(info);
            try {
                byte[] ll = new byte[16];
                ll[0] = (byte) 0xfe;
                ll[1] = (byte) 0x80;
                for (int i = 0; i < 8; i++) {
                    ll[8 + i] = (byte) (info.nodeGuid() >>> (56 - 8 * i));
                }
                gids = new Gid[] {Gid.of(ll), Gid.of(InetAddress.getByName(ip))};
            } catch (UnknownHostException e) {
                throw new AssertionError(e);
            }
            attrs = new DeviceAttributes("0.0.0", info.nodeGuid(), info.nodeGuid(), Long.MAX_VALUE, 0xfffff000L, 0xffffff, 0,
                    0, "", 1 << 16, 1 << 14, 0, 32, 32, 1 << 14, 1 << 16, 1 << 16, 1 << 14, 128, 128, 8192,
                    DeviceAttributes.ATOMIC_HCA, 1 << 14, 64, 15, 1, 400);
        }

        @Override
        public DeviceAttributes queryDevice() {
            return attrs;
        }

        @Override
        protected PortAttributes driverQueryPort(int port) {
            return new PortAttributes(PortState.ACTIVE, Mtu.MTU_4096, Mtu.MTU_1024, gids.length, 0x10000, 1L << 31, 0, 0, 0,
                    1, 1, 5, LinkLayer.ETHERNET);
        }

        @Override
        protected Gid driverQueryGid(int port, int index) {
            return gids[index];
        }

        @Override
        protected ProtectionDomain driverAllocPd() {
            return new LoopPd(this);
        }

        @Override
        protected CompletionQueue driverCreateCq(int cqe) {
            return new LoopCq(this, CQNS.getAndIncrement(), cqe);
        }

        @Override
        protected void destroy() {
        }
    }

    static final class LoopPd extends ProtectionDomain {
        LoopPd(Context ctx) {
            super(ctx);
        }

        @Override
        protected MemoryRegion driverRegister(DmaRegion region, long offset, long length, int accessMask) {
            int key = KEYS.getAndIncrement();
            LoopMr mr = new LoopMr(this, region, offset, length, accessMask, key);
            MR_TABLE.put(key, mr);
            return mr;
        }

        @Override
        protected QueuePair driverCreateQp(QpInitAttributes init, QpCapabilities requested) {
            return new LoopQp(this, init, requested);
        }

        @Override
        protected AddressHandle driverCreateAh(AhAttributes attributes) {
            throw new VerbsException(VerbsException.EOPNOTSUPP, "the loop provider has no UD");
        }

        @Override
        protected void destroy() {
        }
    }

    static final class LoopMr extends MemoryRegion {
        LoopMr(ProtectionDomain pd, DmaRegion region, long offset, long length, int access, int key) {
            super(pd, region, offset, length, access, key, key);
        }

        @Override
        protected void deregister() {
            MR_TABLE.remove(lkey());
        }
    }

    static final class LoopCq extends CompletionQueue {
        private final ConcurrentLinkedQueue<WorkCompletion> queue = new ConcurrentLinkedQueue<>();

        LoopCq(Context ctx, int cqn, int capacity) {
            super(ctx, cqn, capacity);
        }

        void push(WorkCompletion wc) {
            queue.add(wc);
        }

        @Override
        protected int driverPoll(WorkCompletion wc) {
            WorkCompletion w = queue.poll();
            if (w == null) {
                return 0;
            }
            wc.copyFrom(w);
            return 1;
        }

        @Override
        protected void destroy() {
        }
    }

    /** A send WR as executed: opcode, remote target, and either gathered SGEs or inline bytes. */
    static final class Op {
        WrOpcode op;
        long wrId;
        int flags;
        int rkey;
        long raddr;
        long compareAdd;
        long swap;
        byte[] inline;
        final List<long[]> sges = new ArrayList<>(); // {lkey, addr, length}
    }

    static final class LoopQp extends QueuePair {
        private final ArrayDeque<RecvWr> recvs = new ArrayDeque<>();
        private final ArrayDeque<Op> waiting = new ArrayDeque<>(); // SENDs that found no receive yet (RNR)
        private final LoopSendQueue sq = new LoopSendQueue(this);
        private int destQpn;

        LoopQp(ProtectionDomain pd, QpInitAttributes init, QpCapabilities caps) {
            super(pd, init, caps);
            qpn(QPNS.getAndIncrement());
            QP_TABLE.put(qpn(), this);
        }

        @Override
        public SendQueue sendQueue() {
            return sq;
        }

        @Override
        protected void driverModify(QpAttributes attr, QpState current, QpState next) {
            if (attr.has(QpAttrMask.DEST_QPN)) {
                destQpn = attr.destQpn();
            }
        }

        @Override
        protected boolean driverPostSend(SendWr wr) {
            Op o = new Op();
            o.op = wr.opcode();
            o.wrId = wr.wrId();
            o.flags = wr.sendFlags();
            o.rkey = wr.rkey();
            o.raddr = wr.remoteAddr();
            o.compareAdd = wr.compareAdd();
            o.swap = wr.swap();
            for (int i = 0; i < wr.numSge(); i++) {
                o.sges.add(new long[] {wr.sge(i).lkey(), wr.sge(i).addr(), wr.sge(i).length()});
            }
            execute(o);
            return true;
        }

        @Override
        protected void driverRingSendDoorbell() {
        }

        @Override
        protected boolean driverPostRecv(RecvWr wr) {
            RecvWr copy = new RecvWr(Math.max(1, wr.numSge())).wrId(wr.wrId()).numSge(wr.numSge());
            for (int i = 0; i < wr.numSge(); i++) {
                copy.sge(i).set(wr.sge(i).addr(), wr.sge(i).length(), wr.sge(i).lkey());
            }
            synchronized (LOCK) {
                recvs.add(copy);
                LoopQp src = QP_TABLE.get(destQpn);
                if (src != null) {
                    while (!src.waiting.isEmpty() && !recvs.isEmpty()) {
                        src.deliver(src.waiting.poll());
                    }
                }
            }
            return true;
        }

        @Override
        protected void driverRingRecvDoorbell() {
        }

        @Override
        protected void destroy() {
            QP_TABLE.remove(qpn());
        }

        void execute(Op o) {
            synchronized (LOCK) {
                LoopQp peer = QP_TABLE.get(destQpn);
                if (peer == null) {
                    complete(o, WcStatus.RETRY_EXC_ERR, 0);
                    return;
                }
                if (o.op == WrOpcode.SEND || o.op == WrOpcode.SEND_WITH_IMM) {
                    if (!waiting.isEmpty() || peer.recvs.isEmpty()) {
                        // rnr_retry 7 retries forever: hold the SEND until the peer posts a receive
                        waiting.add(o);
                        return;
                    }
                    deliver(o);
                    return;
                }
                byte[] data;
                switch (o.op) {
                    case RDMA_WRITE:
                    case RDMA_WRITE_WITH_IMM:
                        data = gather(o);
                        if (data == null) {
                            complete(o, WcStatus.LOC_PROT_ERR, 0);
                            return;
                        }
                        UnsafeBuffer dst = remote(o.rkey, o.raddr, data.length, Access.REMOTE_WRITE);
                        if (dst == null) {
                            complete(o, WcStatus.REM_ACCESS_ERR, 0);
                            return;
                        }
                        dst.putBytes(0, data);
                        VarHandle.fullFence();
                        complete(o, WcStatus.SUCCESS, data.length);
                        return;
                    case RDMA_READ: {
                        int len = (int) o.sges.stream().mapToLong(s -> s[2]).sum();
                        UnsafeBuffer src = remote(o.rkey, o.raddr, len, Access.REMOTE_READ);
                        if (src == null) {
                            complete(o, WcStatus.REM_ACCESS_ERR, 0);
                            return;
                        }
                        byte[] b = new byte[len];
                        src.getBytes(0, b);
                        if (!scatter(o.sges, b, b.length)) {
                            complete(o, WcStatus.LOC_PROT_ERR, 0);
                            return;
                        }
                        complete(o, WcStatus.SUCCESS, len);
                        return;
                    }
                    case ATOMIC_FETCH_AND_ADD:
                    case ATOMIC_CMP_AND_SWP: {
                        UnsafeBuffer t = remote(o.rkey, o.raddr, 8, Access.REMOTE_ATOMIC);
                        if (t == null) {
                            complete(o, WcStatus.REM_ACCESS_ERR, 0);
                            return;
                        }
                        long old = t.getLongVolatile(0); // host order, as an HCA's atomic on host memory
                        if (o.op == WrOpcode.ATOMIC_FETCH_AND_ADD) {
                            t.putLongVolatile(0, old + o.compareAdd);
                        } else if (old == o.compareAdd) {
                            t.putLongVolatile(0, o.swap);
                        }
                        byte[] b = new byte[8];
                        new UnsafeBuffer(b).putLong(0, old);
                        if (!scatter(o.sges, b, 8)) {
                            complete(o, WcStatus.LOC_PROT_ERR, 0);
                            return;
                        }
                        complete(o, WcStatus.SUCCESS, 8);
                        return;
                    }
                    default:
                        complete(o, WcStatus.LOC_QP_OP_ERR, 0);
                }
            }
        }

        /** A SEND into the peer's next receive (the caller holds LOCK and made sure there is one). */
        void deliver(Op o) {
            LoopQp peer = QP_TABLE.get(destQpn);
            RecvWr r = peer.recvs.poll();
            byte[] data = gather(o);
            if (data == null) {
                complete(o, WcStatus.LOC_PROT_ERR, 0);
                return;
            }
            List<long[]> sges = new ArrayList<>();
            long room = 0;
            for (int i = 0; i < r.numSge(); i++) {
                sges.add(new long[] {r.sge(i).lkey(), r.sge(i).addr(), r.sge(i).length()});
                room += r.sge(i).length();
            }
            WorkCompletion rwc = new WorkCompletion();
            if (room < data.length || !peer.scatter(sges, data, data.length)) {
                rwc.set(r.wrId(), WcStatus.LOC_LEN_ERR, WcOpcode.RECV, peer.qpn(), 0);
                ((LoopCq) peer.recvCq()).push(rwc);
                complete(o, WcStatus.REM_INV_REQ_ERR, 0);
                return;
            }
            VarHandle.fullFence();
            rwc.set(r.wrId(), WcStatus.SUCCESS, WcOpcode.RECV, peer.qpn(), data.length);
            ((LoopCq) peer.recvCq()).push(rwc);
            complete(o, WcStatus.SUCCESS, data.length);
        }

        private void complete(Op o, WcStatus status, int len) {
            if (status == WcStatus.SUCCESS && (o.flags & SendFlags.SIGNALED) == 0 && !sqSigAll()) {
                return;
            }
            WorkCompletion wc = new WorkCompletion().set(o.wrId, status, o.op.completionOpcode(), qpn(), len);
            ((LoopCq) sendCq()).push(wc);
        }

        private byte[] gather(Op o) {
            if (o.inline != null) {
                return o.inline;
            }
            long total = 0;
            for (long[] s : o.sges) {
                total += s[2];
            }
            byte[] b = new byte[(int) total];
            int at = 0;
            for (long[] s : o.sges) {
                UnsafeBuffer src = local((int) s[0], s[1], (int) s[2], 0);
                if (src == null) {
                    return null;
                }
                src.getBytes(0, b, at, (int) s[2]);
                at += (int) s[2];
            }
            return b;
        }

        private boolean scatter(List<long[]> sges, byte[] data, int len) {
            int at = 0;
            for (long[] s : sges) {
                if (at >= len) {
                    break;
                }
                int n = (int) Math.min(s[2], len - at);
                UnsafeBuffer dst = local((int) s[0], s[1], n, Access.LOCAL_WRITE.bit());
                if (dst == null) {
                    return false;
                }
                dst.putBytes(0, data, at, n);
                at += n;
            }
            return at == len;
        }

        private UnsafeBuffer local(int lkey, long addr, int len, int need) {
            LoopMr mr = MR_TABLE.get(lkey);
            if (mr == null || mr.pd() != pd() || !mr.contains(addr, len) || (mr.access() & need) != need) {
                return null;
            }
            return new UnsafeBuffer(addr, len);
        }

        private UnsafeBuffer remote(int rkey, long addr, int len, Access need) {
            LoopQp peer = QP_TABLE.get(destQpn);
            LoopMr mr = MR_TABLE.get(rkey);
            if (peer == null || mr == null || mr.pd() != peer.pd() || !mr.contains(addr, len) || !Access.has(mr.access(), need)
                    || !Access.has(peer.currentAttributesAccess(), need)) {
                return null;
            }
            return new UnsafeBuffer(addr, len);
        }

        int currentAttributesAccess() {
            return query().accessFlags();
        }
    }

    static final class LoopSendQueue extends SendQueue {
        private final LoopQp qp;
        private final List<Op> batch = new ArrayList<>();
        private Op open;

        LoopSendQueue(LoopQp qp) {
            super(qp);
            this.qp = qp;
        }

        @Override
        protected void driverStart() {
            batch.clear();
        }

        @Override
        protected boolean driverOpenWr(WrOpcode op, long wrId, int sendFlags, int imm, int rkey, long remoteAddr,
                                       long compareAdd, long swap) {
            open = new Op();
            open.op = op;
            open.wrId = wrId;
            open.flags = sendFlags;
            open.rkey = rkey;
            open.raddr = remoteAddr;
            open.compareAdd = compareAdd;
            open.swap = swap;
            return true;
        }

        @Override
        protected void driverUdAddr(AddressHandle ah, int remoteQpn, int remoteQkey) {
            throw new VerbsException(VerbsException.EOPNOTSUPP, "no UD");
        }

        @Override
        protected void driverSge(int lkey, long addr, int length) {
            open.sges.add(new long[] {lkey, addr, length});
        }

        @Override
        protected void driverInline(DirectBuffer src, int offset, int length) {
            byte[] b = new byte[length];
            src.getBytes(offset, b);
            if (open.inline == null) {
                open.inline = b;
            } else {
                byte[] both = new byte[open.inline.length + length];
                System.arraycopy(open.inline, 0, both, 0, open.inline.length);
                System.arraycopy(b, 0, both, open.inline.length, length);
                open.inline = both;
            }
        }

        @Override
        protected void driverCloseWr() {
            batch.add(open);
            open = null;
        }

        @Override
        protected void driverComplete() {
            for (Op o : batch) {
                qp.execute(o);
            }
            batch.clear();
        }

        @Override
        protected void driverAbort() {
            batch.clear();
            open = null;
        }
    }
}
