package io.jhca.rxe.wire;

import static java.nio.ByteOrder.BIG_ENDIAN;

import org.agrona.DirectBuffer;

/**
 * First checks on a received RoCEv2 UDP payload, in rxe_recv.c's spirit (rocev2.md §3.5): length, opcode,
 * TVer, P_Key, ICRC. Returns an int status (a {@link PacketStatus} code), never throws for any packet content
 * and reads only inside [offset, offset + length). Destination QP lookup, QP state, addresses and Q_Key are
 * the transport's job. Not thread-safe (it owns an {@link Icrc}); no allocation.
 */
public final class PacketValidator {

    public static final int OK = 0;
    public static final int TRUNCATED = 1;
    public static final int BAD_LENGTH = 2;
    public static final int UNKNOWN_OPCODE = 3;
    public static final int BAD_TVER = 4;
    public static final int BAD_PKEY = 5;
    public static final int BAD_ICRC = 6;

    private final Icrc icrc = new Icrc();
    private final int pkey;
    private int ipv4Id;

    /** Validator for a port whose only P_Key is 0xFFFF, as rxe's. */
    public PacketValidator() {
        this(Bth.DEFAULT_PKEY);
    }

    public PacketValidator(final int pkey) {
        this.pkey = pkey & 0xFFFF;
    }

    /**
     * rxe_hdr.h pkey_match: same low 15 bits, not 0, and at least one side a full member (bit 15). Against
     * 0xFFFF both 0xFFFF and 0x7FFF match.
     */
    public static boolean pkeyMatch(final int a, final int b) {
        return (a & 0x7FFF) != 0 && (a & 0x7FFF) == (b & 0x7FFF) && ((a | b) & 0x8000) != 0;
    }

    /** Structure only: TRUNCATED, UNKNOWN_OPCODE, BAD_LENGTH, BAD_TVER, BAD_PKEY or OK. No ICRC check. */
    public int validate(final DirectBuffer buffer, final int offset, final int length) {
        if (offset < 0 || length < 0 || offset > buffer.capacity() - length) {
            throw new IndexOutOfBoundsException("range " + offset + "+" + length + " outside buffer of "
                    + buffer.capacity());
        }
        if (length < Bth.LENGTH) {
            return TRUNCATED;
        }
        final int op = buffer.getByte(offset) & 0xFF;
        if (!Opcode.isValid(op)) {
            return UNKNOWN_OPCODE;
        }
        final int headers = Opcode.payloadOffset(op);
        if (length < headers + Icrc.LENGTH) {
            return TRUNCATED;
        }
        final int byte1 = buffer.getByte(offset + 1) & 0xFF;
        final int padCnt = (byte1 >>> 4) & 3;
        final int payload = length - headers - padCnt - Icrc.LENGTH;
        // Headers and ICRC are 4-byte multiples and pad rounds the payload up to one, so the whole is one too.
        if ((length & 3) != 0 || payload < 0 || (!Opcode.hasPayload(op) && (payload | padCnt) != 0)) {
            return BAD_LENGTH;
        }
        if ((byte1 & 0x0F) != Bth.TVER) {
            return BAD_TVER;
        }
        if (!pkeyMatch(buffer.getShort(offset + 2, BIG_ENDIAN) & 0xFFFF, pkey)) {
            return BAD_PKEY;
        }
        return OK;
    }

    /**
     * {@link #validate} then the ICRC of a payload received over IPv4 (see {@link Icrc#verifyIpv4}); on OK the
     * IPv4 Identification it was verified with is in {@link #lastIpv4Id()}.
     */
    public int validateIpv4(final Ipv4IdMode mode, final int srcAddr, final int dstAddr, final int udpSrcPort,
            final int udpDstPort, final DirectBuffer buffer, final int offset, final int length) {
        return validateIpv4(mode, 0, srcAddr, dstAddr, udpSrcPort, udpDstPort, buffer, offset, length);
    }

    /** As above, with the Identification the sender is expected to have used (see {@link Icrc#verifyIpv4}). */
    public int validateIpv4(final Ipv4IdMode mode, final int expectedId, final int srcAddr, final int dstAddr,
            final int udpSrcPort, final int udpDstPort, final DirectBuffer buffer, final int offset, final int length) {
        final int status = validate(buffer, offset, length);
        if (status != OK) {
            return status;
        }
        final int id = icrc.verifyIpv4(mode, expectedId, srcAddr, dstAddr, PacketLayout.IPV4_DF, udpSrcPort,
                udpDstPort, buffer, offset, length);
        if (id == Icrc.NO_MATCH) {
            return BAD_ICRC;
        }
        ipv4Id = id;
        return OK;
    }

    /** {@link #validate} then the ICRC of a payload received over IPv6 (see {@link Icrc#verifyIpv6}). */
    public int validateIpv6(final long srcHi, final long srcLo, final long dstHi, final long dstLo,
            final int udpSrcPort, final int udpDstPort, final DirectBuffer buffer, final int offset,
            final int length) {
        final int status = validate(buffer, offset, length);
        if (status != OK) {
            return status;
        }
        return icrc.verifyIpv6(srcHi, srcLo, dstHi, dstLo, udpSrcPort, udpDstPort, buffer, offset, length)
                ? OK : BAD_ICRC;
    }

    /** IPv4 Identification of the last packet {@link #validateIpv4} accepted. */
    public int lastIpv4Id() {
        return ipv4Id;
    }
}
