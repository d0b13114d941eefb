package io.jhca.tests.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.rxe.wire.Psn;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * Real traffic in one direction of an RC connection, one message at a time: RDMA WRITE, SEND, RDMA READ (up to
 * 64 KiB, WRITEs up to 1 MiB) and FETCH_ADD with random data, each checked byte for byte when it completes. Knows which PSNs its
 * messages use (it starts at the QP's send PSN; a message takes one PSN per MTU, at least one), which is what the
 * hostile peer needs to stay clear of them.
 *
 * <p>Memory: requester region [0, 1 MiB) sources, [1 MiB, 2 MiB) READ targets and the atomic result; responder
 * region [0, 1 MiB) WRITE targets and READ sources, 1 MiB receive buffer, 1.5 MiB the atomic counter.
 */
final class Flow implements HostilePeer.Window {

    private static final int MIB = 1 << 20;
    private static final int MAX_RDMA = 64 * 1024;
    private static final int MAX_SEND = 16 * 1024;
    private static final int RESULT = MIB + MIB / 2;
    private static final int COUNTER = MIB + MIB / 2;

    final String name;
    private final Random random;
    private final QueuePair requester;
    private final QueuePair responder;
    private final MemoryRegion local;
    private final MemoryRegion remote;
    private final UnsafeBuffer localMem;
    private final UnsafeBuffer remoteMem;
    private final int mtu;
    private final int startPsn;
    private long postedPsns;
    private long completedPsns;
    private SendWr wr;

    // the message in flight
    private WrOpcode op;
    private int length;
    private int psns;
    private int srcOff;
    private int dstOff;
    private boolean sendDone;
    private boolean recvDone;
    private long add;
    private long counter;
    private long wrId;

    long messages;
    long bytes;

    Flow(final String name, final long seed, final QueuePair requester, final QueuePair responder,
            final MemoryRegion local, final UnsafeBuffer localMem, final MemoryRegion remote,
            final UnsafeBuffer remoteMem, final int mtu, final int startPsn) {
        this.name = name;
        this.random = new Random(seed);
        this.requester = requester;
        this.responder = responder;
        this.local = local;
        this.remote = remote;
        this.localMem = localMem;
        this.remoteMem = remoteMem;
        this.mtu = mtu;
        this.startPsn = startPsn;
        remoteMem.putLong(COUNTER, 0);
    }

    @Override
    public int completedEnd() {
        return Psn.add(startPsn, (int) (completedPsns & Psn.MASK));
    }

    @Override
    public int postedEnd() {
        return Psn.add(startPsn, (int) (postedPsns & Psn.MASK));
    }

    boolean idle() {
        return op == null;
    }

    /** Posts the next message if none is in flight. */
    void maybePost() {
        if (op != null) {
            return;
        }
        wrId++;
        final int kind = random.nextInt(4);
        sendDone = false;
        recvDone = true;
        if (kind == 3) {
            op = WrOpcode.ATOMIC_FETCH_AND_ADD;
            length = 8;
            psns = 1;
            add = random.nextLong();
            localMem.putLong(RESULT, 0x5A5A5A5A5A5A5A5AL);
            wr = new SendWr().wrId(wrId).opcode(op).sendFlags(SendFlags.SIGNALED).sge(local, RESULT, 8)
                    .atomic(remote.address() + COUNTER, remote.rkey(), add, 0);
        } else {
            final int max = kind == 1 ? MAX_SEND : MAX_RDMA;
            // edges (0, 1 and 2 MTUs), any size, and some WRITEs of up to 1 MiB: longer than the unacknowledged
            // window, so they are on the wire half-sent for a while
            final int shape = random.nextInt(8);
            length = shape == 0 ? random.nextInt(3) * mtu
                    : shape == 1 && kind == 0 ? MIB - random.nextInt(MIB / 2) : random.nextInt(max + 1);
            psns = Math.max(1, (length + mtu - 1) / mtu);
            srcOff = random.nextInt(MIB - length + 1);
            dstOff = random.nextInt(MIB - length + 1);
            final byte[] data = new byte[length];
            random.nextBytes(data);
            if (kind == 0) {
                op = WrOpcode.RDMA_WRITE;
                localMem.putBytes(srcOff, data);
                wr = new SendWr().wrId(wrId).opcode(op).sendFlags(SendFlags.SIGNALED).sge(local, srcOff, length)
                        .rdma(remote.address() + dstOff, remote.rkey());
            } else if (kind == 1) {
                op = WrOpcode.SEND;
                recvDone = false;
                localMem.putBytes(srcOff, data);
                remoteMem.setMemory(MIB, MAX_SEND, (byte) 0);
                responder.postRecv(new RecvWr().wrId(wrId).sge(remote, MIB, MAX_SEND));
                wr = new SendWr().wrId(wrId).opcode(op).sendFlags(SendFlags.SIGNALED).sge(local, srcOff, length);
            } else {
                op = WrOpcode.RDMA_READ;
                remoteMem.putBytes(srcOff, data);
                wr = new SendWr().wrId(wrId).opcode(op).sendFlags(SendFlags.SIGNALED).sge(local, MIB + dstOff % (MIB / 2), length)
                        .rdma(remote.address() + srcOff, remote.rkey());
                dstOff = MIB + dstOff % (MIB / 2);
            }
        }
        assertEquals(1, requester.postSend(wr), name + ": send queue full");
        postedPsns += psns;
    }

    /** A completion of the requester's send queue. */
    void onSend(final WorkCompletion wc, final String context) {
        check(wc, context);
        sendDone = true;
        finishIfDone(context);
    }

    /** A receive completion at the responder. */
    void onRecv(final WorkCompletion wc, final String context) {
        check(wc, context);
        assertEquals(WcOpcode.RECV, wc.opcode(), name);
        assertEquals(length, wc.byteLen(), () -> name + ": SEND byte_len");
        recvDone = true;
        finishIfDone(context);
    }

    private void check(final WorkCompletion wc, final String context) {
        if (wc.status() != WcStatus.SUCCESS || wc.wrId() != wrId || op == null) {
            fail(name + ": unexpected completion " + wc + " while " + op + " #" + wrId + " of " + length
                    + " B was in flight\n" + context);
        }
    }

    private void finishIfDone(final String context) {
        if (!sendDone || !recvDone) {
            return;
        }
        switch (op) {
            case RDMA_WRITE:
                compare(localMem, srcOff, remoteMem, dstOff, context);
                break;
            case SEND:
                compare(localMem, srcOff, remoteMem, MIB, context);
                break;
            case RDMA_READ:
                compare(remoteMem, srcOff, localMem, dstOff, context);
                break;
            default:
                assertEquals(counter, localMem.getLong(RESULT), () -> name + ": FETCH_ADD original\n" + context);
                counter += add;
                assertEquals(counter, remoteMem.getLong(COUNTER), () -> name + ": counter after FETCH_ADD");
        }
        messages++;
        bytes += length;
        completedPsns += psns;
        op = null;
    }

    private void compare(final UnsafeBuffer src, final int srcAt, final UnsafeBuffer dst, final int dstAt,
            final String context) {
        for (int i = 0; i < length; i++) {
            if (src.getByte(srcAt + i) != dst.getByte(dstAt + i)) {
                fail(name + ": " + op + " of " + length + " B differs at byte " + i + "\n" + context);
            }
        }
    }
}
