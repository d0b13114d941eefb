package io.jhca.rxe.transport;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.rxe.wire.Aeth;
import io.jhca.rxe.wire.AtomicAckEth;
import io.jhca.rxe.wire.AtomicEth;
import io.jhca.rxe.wire.Bth;
import io.jhca.rxe.wire.Deth;
import io.jhca.rxe.wire.Icrc;
import io.jhca.rxe.wire.ImmDt;
import io.jhca.rxe.wire.Opcode;
import io.jhca.rxe.wire.Reth;

/**
 * A received packet that passed the structural and ICRC checks, decoded once by the engine: the BTH fields,
 * where the payload is, and where it came from. One instance, reused for every packet; the header accessors
 * wrap flyweights at the opcode's offsets (big-endian fields).
 */
final class RxPacket {
    UnsafeBuffer buffer;
    /** UDP payload length (BTH .. ICRC). */
    int length;
    int opcode;
    int psn;
    int destQp;
    boolean ackReq;
    boolean se;
    int payloadIndex;
    int payloadLength;
    /** Sender, as decoded from the datagram's source. */
    Peer source;
    /** The local address it arrived at (the destination address its ICRC covered): the device's, or a group's. */
    Peer local;
    /** IPv4 Identification the ICRC was verified with (0 in strict mode). */
    int ipv4Id;

    private final Reth reth = new Reth();
    private final Aeth aeth = new Aeth();
    private final AtomicEth atomicEth = new AtomicEth();
    private final AtomicAckEth atomicAckEth = new AtomicAckEth();
    private final ImmDt immDt = new ImmDt();
    private final Deth deth = new Deth();
    private final Bth bth = new Bth();

    /** Decodes the BTH of a validated packet of {@code length} bytes at index 0. */
    void decode(final UnsafeBuffer buffer, final int length, final Peer source, final Peer local, final int ipv4Id) {
        this.buffer = buffer;
        this.length = length;
        this.source = source;
        this.local = local;
        this.ipv4Id = ipv4Id;
        bth.wrap(buffer, 0);
        opcode = bth.opcode();
        psn = bth.psn();
        destQp = bth.destQp();
        ackReq = bth.ackReq();
        se = bth.se();
        payloadIndex = Opcode.payloadOffset(opcode);
        payloadLength = length - payloadIndex - bth.padCnt() - Icrc.LENGTH;
    }

    int padCnt() {
        return bth.padCnt();
    }

    Reth reth() {
        return reth.wrap(buffer, Opcode.rethOffset(opcode));
    }

    Aeth aeth() {
        return aeth.wrap(buffer, Opcode.aethOffset(opcode));
    }

    AtomicEth atomicEth() {
        return atomicEth.wrap(buffer, Opcode.atomicEthOffset(opcode));
    }

    AtomicAckEth atomicAckEth() {
        return atomicAckEth.wrap(buffer, Opcode.atomicAckEthOffset(opcode));
    }

    int imm() {
        return immDt.wrap(buffer, Opcode.immDtOffset(opcode)).immediate();
    }

    /** The IETH's R_Key (SEND with invalidate). */
    int ieth() {
        return buffer.getInt(Opcode.iethOffset(opcode), java.nio.ByteOrder.BIG_ENDIAN);
    }

    Deth deth() {
        return deth.wrap(buffer, Opcode.dethOffset(opcode));
    }

    boolean has(final int flag) {
        return (Opcode.flags(opcode) & flag) != 0;
    }
}
