package io.jhca.rxe.transport;

import static java.nio.ByteOrder.BIG_ENDIAN;

import org.agrona.UnsafeApi;
import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.rxe.wire.Aeth;
import io.jhca.rxe.wire.AtomicEth;
import io.jhca.rxe.wire.Bth;
import io.jhca.rxe.wire.Deth;
import io.jhca.rxe.wire.Opcode;
import io.jhca.rxe.wire.PacketLayout;
import io.jhca.rxe.wire.Psn;
import io.jhca.rxe.wire.Reth;
import io.jhca.verbs.Access;
import io.jhca.verbs.AsyncEvent;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.QpType;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;

/**
 * The responder of a QP (rxe_resp.c), in rxe's order of checks (rocev2.md §3.3):
 * <ol>
 * <li>PSN (RC): the expected one goes on; one ahead of it draws a single NAK PSN-sequence-error carrying the
 * expected PSN, then packets are dropped until the expected one arrives; one behind is a duplicate. UC: on a gap
 * the message is dropped up to the next FIRST/ONLY. UD: no PSN check.</li>
 * <li>Opcode sequence: after FIRST/MIDDLE only MIDDLE/LAST of the same operation.</li>
 * <li>QP access flags for WRITE/READ/atomic.</li>
 * <li>Resources: a SEND or WRITE-with-immediate needs a posted receive WQE, else RNR NAK with min_rnr_timer.</li>
 * <li>Length: FIRST and MIDDLE carry exactly one MTU, LAST 1..MTU, ONLY up to MTU.</li>
 * <li>R_Key, PD, access and bounds of the target span (zero-length READ/WRITE skip it).</li>
 * <li>Execute, count the MSN, acknowledge when AckReq is set.</li>
 * </ol>
 * Errors: invalid request NAK 0x61, remote access NAK 0x62, remote operational NAK 0x63; then the QP goes to ERR
 * (class A/C). Duplicates: SEND/WRITE are not executed again but re-acknowledged with the PSN before the expected
 * one; a READ is replayed from the resource ring; an atomic is answered from the cache, never executed twice.
 * READ responses are streamed, a budget of packets per engine cycle.
 *
 * <p>Coalesced acknowledges (IBTA 9.7.5.1; rocev2.md §3.3 step 9): the ACK a SEND or WRITE asks for is held
 * back, not sent at once, unless the message completed on a CQ armed for an event (the application sleeps, and
 * answers a wake-up later; its peer takes the ACK's completion meanwhile). A later one replaces it (an ACK
 * acknowledges every request before its PSN), and it leaves with the next request packet this QP sends, just before
 * it and in the same system call (so in a ping-pong the answer the application posts costs one trip into the kernel,
 * not two, and the peer still sees the ACK first, as from a responder that never holds one), before any other
 * response of this QP (responses stay in PSN order), when it has been held the device's ACK hold time (default 4 us:
 * half the shortest local ACK timeout, 8.2 us; long enough for an application on another core to post its answer
 * after it saw the request land), when the QP is modified, or when it is destroyed, whichever comes first. With
 * caller progress the engine cycle that checks the time is the application's next progress call; if none comes,
 * {@link HeldAckWatch} sends the ACK at most its quiet time and its longest period (1 + 16 ms) late. The
 * hold is far below any retransmit timer a requester can arm (4.096 us * 2^timeout, and Linux rxe counts whole
 * jiffies), so a held ACK never makes the peer retransmit.
 */
final class Responder {

    private static final int NONE = 0;
    private static final int SEND = 1;
    private static final int WRITE = 2;
    /** The GRH area at the start of a UD receive buffer (IBTA; rocev2.md §3.3 step 7). */
    static final int GRH_LENGTH = 40;
    /** TTL / hop limit written into the reconstructed UD GRH: the real value is not visible behind a socket. */
    private static final int GRH_HOP_LIMIT = 64;

    private final TransportQp qp;
    final ResponderResources resources = new ResponderResources();
    /** Expected PSN (rxe qp->resp.psn). */
    int ePsn;
    /** Message sequence number (rxe qp->resp.msn). */
    int msn;
    private boolean sentPsnNak;
    private boolean ucDropping;
    /** Operation of the message in progress, NONE between messages. */
    private int current = NONE;
    /** A receive WQE (the head of the RQ) is being filled. */
    boolean recvInProgress;
    private long recvOffset;
    private long writeVa;
    private int writeRkey;
    private long writeResid;
    private long writeLength;
    // READ response in progress
    private boolean readActive;
    private boolean readFirst;
    private long readVa;
    private long readResid;
    private int readRkey;
    private int readPsn;
    private final UnsafeBuffer grh = new UnsafeBuffer(new byte[GRH_LENGTH]);
    // the held ACK (coalesced acknowledges): its PSN, the MSN it carries, when it was first held
    private boolean ackHeld;
    private int heldAckPsn;
    private int heldAckMsn;
    private long ackHeldSince;
    /** Requests the held ACK acknowledges: more than one, and the hold saved datagrams. */
    private int heldAcks;
    /**
     * Whether holding may pay on this QP: it answers (it sends requests of its own, which a held ACK can go with), or
     * requests come in bursts that one ACK covers. Cleared when a hold ends by time having covered one request alone
     * and this QP sent nothing meanwhile: a peer that writes and waits for each completion, to a QP that never
     * answers, would otherwise wait out the whole hold every time. While clear, an ACK waits only for the end of the
     * engine cycle that took its request in, so a burst taken in one batch still gets one ACK. Set again by any
     * request this QP sends. Whether an answer came in time is not the test: on a host short of CPU an ACK sent at
     * once wakes the peer's threads, which then delay the answer, and the hold would not come back.
     */
    private boolean holdPays = true;

    Responder(final TransportQp qp) {
        this.qp = qp;
    }

    void reset(final int psn) {
        ePsn = psn;
        msn = 0;
        sentPsnNak = false;
        ucDropping = false;
        current = NONE;
        recvInProgress = false;
        readActive = false;
        ackHeld = false;
        holdPays = true;
        resources.clear();
    }

    void onRequest(final RxPacket p) {
        if (readActive) {
            finishReadReply(); // responses go out in PSN order: finish the READ before anything newer
        }
        if (qp.type == QpType.UD) {
            onUdSend(p);
            return;
        }
        final int op = p.opcode;
        final boolean rc = qp.type == QpType.RC;
        if (rc) {
            final int diff = Psn.compare(p.psn, ePsn);
            if (diff > 0) {
                qp.count(RxeCounters.Counter.OUT_OF_SEQUENCE);
                if (!sentPsnNak) {
                    sentPsnNak = true;
                    qp.count(RxeCounters.Counter.SENT_NAK_SEQ_ERR);
                    sendAck(Aeth.nakSyndrome(Aeth.NAK_PSN_SEQUENCE_ERROR), ePsn); // carries the expected PSN
                } else {
                    qp.count(RxeCounters.Counter.DROP_OUT_OF_SEQUENCE);
                }
                return;
            }
            if (diff < 0) {
                duplicate(p);
                return;
            }
            sentPsnNak = false;
        } else if (p.psn != ePsn || ucDropping) {
            abortMessage();
            if (!Opcode.isStart(op)) {
                ucDropping = true; // UC class D: drop until the next FIRST/ONLY
                ePsn = Psn.next(p.psn);
                qp.count(RxeCounters.Counter.DROP_OUT_OF_SEQUENCE);
                return;
            }
            ucDropping = false;
            ePsn = p.psn;
        }
        final int flags = Opcode.flags(op);
        // opcode sequence (rxe check_op_seq)
        final boolean start = (flags & Opcode.START) != 0;
        final boolean end = (flags & Opcode.END) != 0;
        final int kind = (flags & Opcode.SEND) != 0 ? SEND : (flags & Opcode.WRITE) != 0 ? WRITE : NONE;
        if (current != NONE ? (start || kind != current) : !start) {
            invalid(p, rc, WcStatus.REM_INV_REQ_ERR);
            return;
        }
        // QP access (rxe check_op_valid)
        final int need = kind == WRITE ? Access.REMOTE_WRITE.bit()
                : (flags & Opcode.READ) != 0 ? Access.REMOTE_READ.bit()
                : (flags & Opcode.ATOMIC) != 0 ? Access.REMOTE_ATOMIC.bit() : 0;
        if (need != 0 && (qp.accessFlags & need) == 0) {
            invalid(p, rc, WcStatus.REM_INV_REQ_ERR);
            return;
        }
        // resources (rxe check_resource)
        if ((flags & Opcode.CONSUMES_RECV_WQE) != 0 && !recvInProgress && !qp.rq.hasPosted()) {
            if (rc) {
                qp.count(RxeCounters.Counter.SEND_RNR_ERR);
                sendAck(Aeth.rnrNakSyndrome(qp.minRnrTimer), p.psn);
            } else {
                ucDropping = true;
                ePsn = Psn.next(p.psn);
                qp.count(RxeCounters.Counter.DROP_NO_RECV_WQE);
            }
            return;
        }
        if ((flags & (Opcode.READ | Opcode.ATOMIC)) != 0 && qp.maxDestRdAtomic == 0) {
            invalid(p, rc, WcStatus.REM_INV_REQ_ERR);
            return;
        }
        // length (rxe check_length)
        if (kind != NONE) {
            final int n = p.payloadLength;
            final int mtu = qp.mtu;
            final boolean ok = start && end ? n <= mtu : start || (flags & Opcode.MIDDLE) != 0 ? n == mtu : n > 0 && n <= mtu;
            if (!ok) {
                invalid(p, rc, WcStatus.REM_INV_REQ_ERR);
                return;
            }
        }
        if ((flags & Opcode.HAS_RETH) != 0 && p.reth().dmaLengthUnsigned() > (1L << 31)) {
            invalid(p, rc, WcStatus.REM_INV_REQ_ERR);
            return;
        }
        switch (kind) {
            case SEND:
                executeSend(p, start, end, rc);
                return;
            case WRITE:
                if (start) {
                    qp.count(RxeCounters.Counter.RX_WRITE_REQUESTS);
                }
                executeWrite(p, start, end, rc);
                return;
            default:
                if ((flags & Opcode.READ) != 0) {
                    qp.count(RxeCounters.Counter.RX_READ_REQUESTS);
                    executeRead(p);
                } else {
                    qp.count(RxeCounters.Counter.RX_ATOMIC_REQUESTS);
                    executeAtomic(p);
                }
        }
    }

    private void abortMessage() {
        current = NONE;
        recvInProgress = false; // the same receive WQE will take the next message
    }

    private void executeSend(final RxPacket p, final boolean start, final boolean end, final boolean rc) {
        final RecvWqe w = nextRecvWqe();
        boolean asleep = false;
        if (start) {
            recvInProgress = true;
            recvOffset = 0;
        }
        final int n = p.payloadLength;
        if (recvOffset + n > w.length) {
            if (rc) {
                fail(p, Aeth.NAK_INVALID_REQUEST, WcStatus.LOC_LEN_ERR, AsyncEvent.Type.QP_REQ_ERR,
                        "receive buffer too small");
            } else {
                abortMessage();
                ucDropping = true;
                ePsn = Psn.next(p.psn);
                qp.count(RxeCounters.Counter.DROP_BAD_LENGTH);
            }
            return;
        }
        if (n > 0 && qp.engine.memory.scatter(qp.pd, w.sgeAddr, w.sgeLength, w.sgeLkey, w.numSge, recvOffset,
                p.buffer, p.payloadIndex, n) != MemoryAccess.OK) {
            fail(p, Aeth.NAK_REMOTE_OPERATIONAL_ERROR, WcStatus.LOC_PROT_ERR, AsyncEvent.Type.QP_FATAL,
                    "receive WQE names memory it may not write");
            return;
        }
        recvOffset += n;
        ePsn = Psn.next(p.psn);
        if (end) {
            current = NONE;
            msn = Psn.next(msn); // MSN is 24 bits like a PSN
            final boolean imm = p.has(Opcode.HAS_IMMDT);
            if (p.has(Opcode.HAS_IETH) && invalidateFailed(p, w)) {
                return;
            }
            final WorkCompletion wc = qp.completeRecv(w, WcStatus.SUCCESS, WcOpcode.RECV, (int) recvOffset);
            if (wc != null && p.has(Opcode.HAS_IETH)) {
                wc.invalidatedRkey(p.ieth());
            }
            qp.rq.completeHead();
            asleep = qp.commitRecv(wc, imm, imm ? p.imm() : 0, -1, false, p.se);
            recvInProgress = false;
        } else {
            current = SEND;
        }
        if (rc && p.ackReq) {
            ack(p.psn, asleep);
        }
    }

    private void executeWrite(final RxPacket p, final boolean start, final boolean end, final boolean rc) {
        boolean asleep = false;
        if (start) {
            final Reth reth = p.reth();
            writeVa = reth.va();
            writeRkey = reth.rkey();
            writeResid = reth.dmaLengthUnsigned();
            writeLength = writeResid;
            if (writeResid > 0 && qp.engine.memory.checkRemote(qp, writeRkey, writeVa, writeResid,
                    Access.REMOTE_WRITE.bit()) == null) {
                accessError(p, rc);
                return;
            }
        }
        final int n = p.payloadLength;
        // rxe check_rkey, IBTA C9-92: the last (or only) packet carries exactly what the RETH still owes; every other
        // packet exactly one MTU, with more to come. A WRITE_ONLY under a RETH promising more than it carries is
        // invalid, not a short write.
        final boolean fits = end ? n == writeResid && p.padCnt() == Bth.padFor(n)
                : writeResid > qp.mtu && n == qp.mtu && p.padCnt() == 0;
        if (!fits) {
            invalid(p, rc, WcStatus.REM_INV_REQ_ERR);
            return;
        }
        if (n > 0) {
            // looked up again per packet: the MR may have been deregistered since FIRST
            final MemoryRegion mr = qp.engine.memory.checkRemote(qp, writeRkey, writeVa, n, Access.REMOTE_WRITE.bit());
            if (mr == null) {
                accessError(p, rc);
                return;
            }
            MemoryAccess.writeRemote(p.buffer, p.payloadIndex, mr, writeVa, n);
            writeVa += n;
            writeResid -= n;
        }
        ePsn = Psn.next(p.psn);
        if (end) {
            current = NONE;
            msn = Psn.next(msn);
            if (p.has(Opcode.HAS_IMMDT)) {
                final RecvWqe w = nextRecvWqe();
                final WorkCompletion wc = qp.completeRecv(w, WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM,
                        (int) writeLength);
                qp.rq.completeHead();
                asleep = qp.commitRecv(wc, true, p.imm(), -1, false, p.se);
                recvInProgress = false;
            }
        } else {
            current = WRITE;
        }
        if (rc && p.ackReq) {
            ack(p.psn, asleep);
        }
    }

    private void executeRead(final RxPacket p) {
        final Reth reth = p.reth();
        final long length = reth.dmaLengthUnsigned();
        final long va = reth.va();
        final int rkey = reth.rkey();
        if (length > 0 && qp.engine.memory.checkRemote(qp, rkey, va, length, Access.REMOTE_READ.bit()) == null) {
            accessError(p, true);
            return;
        }
        final int packets = length == 0 ? 1 : (int) ((length + qp.mtu - 1) / qp.mtu);
        final ResponderResources.Entry e = resources.allocate();
        e.atomic = false;
        e.firstPsn = p.psn;
        e.lastPsn = Psn.add(p.psn, packets - 1);
        e.va = va;
        e.rkey = rkey;
        e.length = length;
        msn = Psn.next(msn); // rxe: MSN counts a READ when it is accepted, before any response
        ePsn = Psn.add(p.psn, packets);
        startReadReply(va, length, rkey, p.psn);
    }

    private void executeAtomic(final RxPacket p) {
        final AtomicEth a = p.atomicEth();
        final long va = a.va();
        if ((va & 7) != 0) {
            invalid(p, true, WcStatus.REM_INV_REQ_ERR); // rxe: misaligned atomic = invalid request
            return;
        }
        final MemoryRegion mr = qp.engine.memory.checkRemote(qp, a.rkey(), va, 8, Access.REMOTE_ATOMIC.bit());
        if (mr == null) {
            accessError(p, true);
            return;
        }
        final long original;
        if (p.opcode == Opcode.RC_COMPARE_SWAP) {
            // host-order 64-bit value, as rxe's atomic_reply operates on it; atomic w.r.t. this host's CPUs
            original = UnsafeApi.compareAndExchangeLong(null, MemoryAccess.atomicTarget(mr, va), a.compare(), a.swapAdd());
        } else {
            original = UnsafeApi.getAndAddLong(null, MemoryAccess.atomicTarget(mr, va), a.swapAdd());
        }
        final ResponderResources.Entry e = resources.allocate();
        e.atomic = true;
        e.firstPsn = p.psn;
        e.lastPsn = p.psn;
        e.original = original;
        msn = Psn.next(msn);
        ePsn = Psn.next(p.psn);
        sendAtomicAck(p.psn, original);
    }

    private void duplicate(final RxPacket p) {
        qp.count(RxeCounters.Counter.DUPLICATE_REQUEST);
        final int flags = Opcode.flags(p.opcode);
        if ((flags & (Opcode.SEND | Opcode.WRITE)) != 0) {
            sendAck(Aeth.SYNDROME_ACK, Psn.previous(ePsn)); // C9-105: ack again, whatever AckReq says
            return;
        }
        if ((flags & Opcode.READ) != 0) {
            final ResponderResources.Entry e = resources.findRead(p.psn);
            final Reth reth = p.reth();
            final long va = reth.va();
            final long length = reth.dmaLengthUnsigned();
            if (e == null || reth.rkey() != e.rkey || !e.covers(va, length)) {
                qp.count(RxeCounters.Counter.DROP_STALE_DUPLICATE);
                return;
            }
            startReadReply(va, length, e.rkey, p.psn); // replay from the duplicate's PSN
            return;
        }
        final ResponderResources.Entry e = resources.findAtomic(p.psn);
        if (e == null) {
            qp.count(RxeCounters.Counter.DROP_STALE_DUPLICATE);
            return;
        }
        sendAtomicAck(p.psn, e.original); // the cached result: never executed twice
    }

    /**
     * A SEND_WITH_INV's invalidation, after its data is in (rxe_resp.c execute): if the rkey cannot be invalidated,
     * class J: the receive completes with REM_INV_REQ_ERR, the message is acknowledged as rxe does, and the QP goes to
     * ERR. True if it failed (all of that done).
     */
    private boolean invalidateFailed(final RxPacket p, final RecvWqe w) {
        final String error = WindowOps.invalidate(qp, p.ieth());
        if (error == null) {
            return false;
        }
        // the message was taken (ePsn, MSN and the opcode sequence already moved on): acknowledged, then ERR
        qp.markError(AsyncEvent.Type.QP_REQ_ERR, "SEND_WITH_INV: " + error);
        sendAck(Aeth.SYNDROME_ACK, p.psn);
        final WorkCompletion wc = qp.completeRecv(w, WcStatus.REM_INV_REQ_ERR, WcOpcode.RECV, 0);
        qp.rq.completeHead();
        qp.commitRecv(wc, false, 0, -1, false, false);
        recvInProgress = false;
        qp.flush();
        return true;
    }

    /** The receive WQE a packet consumes; an embedding model may refill an empty queue first (see Engine). */
    private RecvWqe nextRecvWqe() {
        final RecvWqe w = qp.rq.peek();
        if (w != null || !qp.engine.refillReceiveQueue(qp.qpn)) {
            return w;
        }
        return qp.rq.peek();
    }

    private void onUdSend(final RxPacket p) {
        final Deth deth = p.deth();
        final int expectedQkey = qp.qpn == 1 ? Deth.GSI_QKEY : qp.qkey;
        if (deth.qkey() != expectedQkey) {
            qp.count(RxeCounters.Counter.DROP_BAD_QKEY);
            return;
        }
        final RecvWqe w = nextRecvWqe();
        if (w == null) {
            qp.count(RxeCounters.Counter.DROP_NO_RECV_WQE);
            return;
        }
        final int n = p.payloadLength;
        if (GRH_LENGTH + (long) n > w.length) {
            qp.count(RxeCounters.Counter.DROP_BAD_LENGTH); // rxe: UD class D, message dropped
            return;
        }
        buildGrh(p);
        final MemoryAccess mem = qp.engine.memory;
        if (mem.scatter(qp.pd, w.sgeAddr, w.sgeLength, w.sgeLkey, w.numSge, 0, grh, 0, GRH_LENGTH) != MemoryAccess.OK
                || (n > 0 && mem.scatter(qp.pd, w.sgeAddr, w.sgeLength, w.sgeLkey, w.numSge, GRH_LENGTH, p.buffer,
                p.payloadIndex, n) != MemoryAccess.OK)) {
            final WorkCompletion wc = qp.completeRecv(w, WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0);
            qp.rq.completeHead();
            qp.markError(AsyncEvent.Type.QP_FATAL, "UD receive WQE names memory it may not write");
            qp.commitRecv(wc, false, 0, -1, false, false);
            qp.flush();
            return;
        }
        final boolean imm = p.has(Opcode.HAS_IMMDT);
        final WorkCompletion wc = qp.completeRecv(w, WcStatus.SUCCESS, WcOpcode.RECV, GRH_LENGTH + n);
        qp.rq.completeHead();
        qp.commitRecv(wc, imm, imm ? p.imm() : 0, deth.srcQp(), true, p.se);
    }

    /**
     * The 40-byte GRH area of a UD receive: for IPv4 20 zero bytes then the IPv4 header, for IPv6 the IPv6
     * header (RoCEv2 annex A17.4.5.2; rxe). A socket does not show the received header, so it is rebuilt from
     * what is known: addresses, lengths, DF, protocol 17, the IPv4 ID the ICRC was verified with; TOS/traffic
     * class 0 and TTL/hop limit {@value #GRH_HOP_LIMIT} stand in for the unseen values. Big-endian.
     */
    private void buildGrh(final RxPacket p) {
        final Peer src = p.source;
        final Peer dst = p.local; // the address it arrived at: a group's for multicast
        final int udpLength = PacketLayout.UDP_HEADER_LENGTH + p.length;
        grh.setMemory(0, GRH_LENGTH, (byte) 0);
        if (src.isIpv4()) {
            final int ip = 20;
            grh.putByte(ip, (byte) PacketLayout.IPV4_VERSION_IHL);
            grh.putShort(ip + PacketLayout.IPV4_TOTAL_LENGTH, (short) (PacketLayout.IPV4_HEADER_LENGTH + udpLength), BIG_ENDIAN);
            grh.putShort(ip + PacketLayout.IPV4_ID, (short) p.ipv4Id, BIG_ENDIAN);
            grh.putShort(ip + PacketLayout.IPV4_FLAGS_FRAGMENT, (short) PacketLayout.IPV4_DF, BIG_ENDIAN);
            grh.putByte(ip + PacketLayout.IPV4_TTL, (byte) GRH_HOP_LIMIT);
            grh.putByte(ip + PacketLayout.IPV4_PROTOCOL, (byte) PacketLayout.IP_PROTO_UDP);
            grh.putInt(ip + PacketLayout.IPV4_SRC, src.ipv4Address(), BIG_ENDIAN);
            grh.putInt(ip + PacketLayout.IPV4_DST, dst.ipv4Address(), BIG_ENDIAN);
            grh.putShort(ip + PacketLayout.IPV4_CHECKSUM, (short) PacketLayout.ipv4HeaderChecksum(grh, ip), BIG_ENDIAN);
        } else {
            grh.putInt(0, 6 << 28, BIG_ENDIAN); // version 6, traffic class 0, flow label 0
            grh.putShort(PacketLayout.IPV6_PAYLOAD_LENGTH, (short) udpLength, BIG_ENDIAN);
            grh.putByte(PacketLayout.IPV6_NEXT_HEADER, (byte) PacketLayout.IP_PROTO_UDP);
            grh.putByte(PacketLayout.IPV6_HOP_LIMIT, (byte) GRH_HOP_LIMIT);
            grh.putLong(PacketLayout.IPV6_SRC, src.hi(), BIG_ENDIAN);
            grh.putLong(PacketLayout.IPV6_SRC + 8, src.lo(), BIG_ENDIAN);
            grh.putLong(PacketLayout.IPV6_DST, dst.hi(), BIG_ENDIAN);
            grh.putLong(PacketLayout.IPV6_DST + 8, dst.lo(), BIG_ENDIAN);
        }
    }

    // ------------------------------------------------------------------------------------------- READ reply

    private void startReadReply(final long va, final long length, final int rkey, final int psn) {
        readActive = true;
        readFirst = true;
        readVa = va;
        readResid = length;
        readRkey = rkey;
        readPsn = psn;
        continueReadReply(1); // the first response goes out at once, the rest from the engine cycle
    }

    /** Sends up to {@code budget} READ response packets; returns how many. */
    int continueReadReply(final int budget) {
        int sent = 0;
        while (readActive && sent < budget && qp.canRespond()) {
            sendReadPacket();
            sent++;
        }
        return sent;
    }

    private void finishReadReply() {
        while (readActive && qp.canRespond()) {
            sendReadPacket();
        }
        readActive = false;
    }

    private void sendReadPacket() {
        final int mtu = qp.mtu;
        final int n = (int) Math.min(readResid, mtu);
        final boolean last = readResid <= mtu;
        final int opcode = readFirst ? (last ? Opcode.RC_RDMA_READ_RESPONSE_ONLY : Opcode.RC_RDMA_READ_RESPONSE_FIRST)
                : (last ? Opcode.RC_RDMA_READ_RESPONSE_LAST : Opcode.RC_RDMA_READ_RESPONSE_MIDDLE);
        final MemoryRegion mr = n > 0 ? qp.engine.memory.checkRemote(qp, readRkey, readVa, n, Access.REMOTE_READ.bit())
                : null;
        if (n > 0 && mr == null) {
            // the MR went away under a READ in progress
            readActive = false;
            // in ERR before the NAK leaves: the peer's error completion must not overtake this QP's state
            qp.enterError(AsyncEvent.Type.QP_ACCESS_ERR, "memory of an RDMA READ was deregistered");
            qp.count(RxeCounters.Counter.SENT_NAK_REM_ACCESS);
            sendAck(Aeth.nakSyndrome(Aeth.NAK_REMOTE_ACCESS_ERROR), readPsn);
            return;
        }
        releaseHeldAck();
        final PacketOut out = qp.engine.out;
        final int at = out.begin(opcode, false, n, qp.destQpn, false, readPsn);
        if (Opcode.aethOffset(opcode) != Opcode.NO_HEADER) {
            out.aeth().set(Aeth.SYNDROME_ACK, msn);
        }
        if (n > 0) {
            MemoryAccess.readRemote(mr, readVa, out.buffer, at, n);
        }
        out.send(qp.peer);
        readVa += n;
        readResid -= n;
        readPsn = Psn.next(readPsn);
        readFirst = false;
        if (last) {
            readActive = false;
        }
    }

    // ------------------------------------------------------------------------------------------------- acks

    /**
     * Acknowledges the request at {@code psn}: held back, unless the device holds no ACKs or the message just
     * completed on a CQ armed for an event ({@code asleep}). An application that sleeps on completion events answers
     * a wake-up later, longer than the hold; its peer is better served by the ACK now, whose completion it can take
     * while this side wakes up.
     */
    private void ack(final int psn, final boolean asleep) {
        if (asleep || qp.engine.ackHoldNanos() == 0) {
            sendAck(Aeth.SYNDROME_ACK, psn);
            return;
        }
        if (ackHeld) {
            heldAcks++;
            qp.count(RxeCounters.Counter.ACKS_COALESCED);
        } else {
            ackHeld = true;
            heldAcks = 1;
            ackHeldSince = qp.engine.cycleNanos();
            qp.count(RxeCounters.Counter.ACK_DEFERRED);
            qp.engine.ackHeld();
        }
        heldAckPsn = psn;
        heldAckMsn = msn;
    }

    /**
     * Engine cycle, after this QP's requester ran: sends the held ACK if it has been held long enough. Returns the
     * packets sent (0 or 1).
     */
    int releaseHeldAckIfDue(final long now) {
        if (!ackHeld || nanosToHeldAckRelease(now) > 0) {
            return 0;
        }
        if (heldAcks == 1) {
            holdPays = false;   // the hold only delayed this ACK: nothing answered it, nothing joined it
        }
        releaseHeldAck();
        return 1;
    }

    /**
     * Sends the request packet this QP's requester built in {@code out}: after the held ACK, if one is held, in the same
     * system call ({@link PacketOut#sendAfterAck}). The peer sees the ACK before the request, as from a responder
     * that never held it, and the round trip pays one trip into the kernel for both. Returns whether the request
     * packet was handed to the network.
     */
    boolean sendRequest(final PacketOut out) {
        holdPays = true;   // this QP answers: its next ACK may leave with its next request
        if (!ackHeld) {
            return out.send(qp.peer);
        }
        ackHeld = false;
        return out.sendAfterAck(qp.peer, heldAckPsn, heldAckMsn);
    }

    /**
     * Nanoseconds from {@code now} until the held ACK goes out by time, {@link Long#MAX_VALUE} if none is held: the
     * one definition of that deadline, for the cycle that releases it and for an idle engine's sleep.
     */
    long nanosToHeldAckRelease(final long now) {
        return ackHeld ? ackHeldSince + (holdPays ? qp.engine.ackHoldNanos() : 0) - now : Long.MAX_VALUE;
    }

    /** Sends the held ACK, if any, now: before any other response, which must not overtake it. */
    void releaseHeldAck() {
        if (ackHeld) {
            ackHeld = false;
            final PacketOut out = qp.engine.out;
            out.begin(Opcode.RC_ACKNOWLEDGE, false, 0, qp.destQpn, false, heldAckPsn);
            out.aeth().set(Aeth.SYNDROME_ACK, heldAckMsn);
            out.send(qp.peer);
        }
    }

    private void sendAck(final int syndrome, final int psn) {
        releaseHeldAck();
        final PacketOut out = qp.engine.out;
        out.begin(Opcode.RC_ACKNOWLEDGE, false, 0, qp.destQpn, false, psn);
        out.aeth().set(syndrome, msn);
        out.send(qp.peer);
    }

    private void sendAtomicAck(final int psn, final long original) {
        releaseHeldAck();
        final PacketOut out = qp.engine.out;
        out.begin(Opcode.RC_ATOMIC_ACKNOWLEDGE, false, 0, qp.destQpn, false, psn);
        out.aeth().set(Aeth.SYNDROME_ACK, msn);
        out.atomicAckEth().origRemoteData(original);
        out.send(qp.peer);
    }

    // ----------------------------------------------------------------------------------------------- errors

    private void invalid(final RxPacket p, final boolean rc, final WcStatus recvStatus) {
        if (rc) {
            fail(p, Aeth.NAK_INVALID_REQUEST, recvStatus, AsyncEvent.Type.QP_REQ_ERR,
                    "invalid request " + Opcode.name(p.opcode) + " psn " + p.psn);
        } else {
            abortMessage(); // UC class D: drop the message
            ucDropping = true;
            ePsn = Psn.next(p.psn);
            qp.count(RxeCounters.Counter.DROP_BAD_LENGTH);
        }
    }

    private void accessError(final RxPacket p, final boolean rc) {
        if (rc) {
            fail(p, Aeth.NAK_REMOTE_ACCESS_ERROR, WcStatus.REM_ACCESS_ERR, AsyncEvent.Type.QP_ACCESS_ERR,
                    "remote access error: rkey, PD, access rights or bounds refused " + Opcode.name(p.opcode));
        } else {
            abortMessage();
            ucDropping = true;
            ePsn = Psn.next(p.psn);
            qp.count(RxeCounters.Counter.DROP_BAD_LENGTH);
        }
    }

    /**
     * Class A/C error (rxe do_class_ac_error): NAK with the packet's PSN, the receive WQE being filled (if any)
     * completes with {@code recvStatus}, the QP goes to ERR. The QP is in ERR before the NAK leaves and before
     * the receive completion can be polled, so neither the peer's error completion nor ours overtakes it.
     */
    private void fail(final RxPacket p, final int nakCode, final WcStatus recvStatus, final AsyncEvent.Type event,
            final String detail) {
        qp.markError(event, detail);
        qp.count(nakCode == Aeth.NAK_INVALID_REQUEST ? RxeCounters.Counter.SENT_NAK_INV_REQ
                : nakCode == Aeth.NAK_REMOTE_ACCESS_ERROR ? RxeCounters.Counter.SENT_NAK_REM_ACCESS
                : RxeCounters.Counter.SENT_NAK_REM_OP);
        sendAck(Aeth.nakSyndrome(nakCode), p.psn);
        if (recvInProgress) {
            final RecvWqe w = nextRecvWqe();
            if (w != null) {
                final WorkCompletion wc = qp.completeRecv(w, recvStatus, WcOpcode.RECV, 0);
                qp.rq.completeHead();
                qp.commitRecv(wc, false, 0, -1, false, false);
            }
            recvInProgress = false;
        }
        current = NONE;
        qp.flush();
    }
}
