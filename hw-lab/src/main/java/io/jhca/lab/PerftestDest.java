package io.jhca.lab;

import io.jhca.verbs.Gid;

import java.nio.charset.StandardCharsets;

/**
 * The per-QP key message of perftest's TCP exchange (src/perftest_communication.c ethernet_write_keys /
 * ethernet_read_keys; formats KEY_PRINT_FMT and KEY_PRINT_FMT_GID in perftest_communication.h):
 * <ul>
 * <li>with a GID: {@code "%04x:%04x:%06x:%06x:%08x:%016llx:"}, then 16 times {@code "%02x:"} (the GID bytes in
 * wire order), then {@code "%08x:"} and a NUL: LID:OUT_READS:QPN:PSN:RKEY:VADDR:GID:SRQN: in {@value #SIZE_GID}
 * bytes (KEY_MSG_SIZE_GID);</li>
 * <li>without (gid_index -1, InfiniBand only): {@code "%04x:%04x:%06x:%06x:%08x:%016llx:%08x"} and a NUL in
 * {@value #SIZE_NO_GID} bytes (KEY_MSG_SIZE).</li>
 * </ul>
 * Both sides send the size their own gid_index implies (perftest sets rem_dest.gid_index = my gid_index).
 *
 * @param lid      16-bit LID (0 on RoCE)
 * @param outReads outstanding RDMA READs/atomics this side accepts (its max_dest_rd_atomic)
 * @param qpn      24-bit QP number
 * @param psn      24-bit starting PSN
 * @param rkey     rkey of the buffer
 * @param vaddr    address the peer writes to / reads from
 * @param gid      the GID, or null for the short form
 * @param srqn     SRQ number (XRC/DC only; 0 otherwise)
 */
public record PerftestDest(int lid, int outReads, int qpn, int psn, int rkey, long vaddr, Gid gid, int srqn) {
    public static final int SIZE_GID = 108;
    public static final int SIZE_NO_GID = 59;

    public PerftestDest {
        range("LID", lid, 0xFFFF);
        range("OUT_READS", outReads, 0xFFFF);
        range("QPN", qpn, 0xFFFFFF);
        range("PSN", psn, 0xFFFFFF);
    }

    /** Size of the message this side sends and expects. */
    public static int size(boolean withGid) {
        return withGid ? SIZE_GID : SIZE_NO_GID;
    }

    /** The characters before the NUL. */
    public String text() {
        StringBuilder sb = new StringBuilder(SIZE_GID);
        sb.append(hex(lid, 4)).append(':').append(hex(outReads, 4)).append(':').append(hex(qpn, 6)).append(':')
                .append(hex(psn, 6)).append(':').append(hex(rkey & 0xFFFFFFFFL, 8)).append(':')
                .append(CFormat.pad(Long.toHexString(vaddr), 16)).append(':');
        if (gid == null) {
            return sb.append(hex(srqn & 0xFFFFFFFFL, 8)).toString();
        }
        for (int i = 0; i < Gid.LENGTH; i++) {
            sb.append(hex(gid.get(i) & 0xff, 2)).append(':');
        }
        return sb.append(hex(srqn & 0xFFFFFFFFL, 8)).append(':').toString();
    }

    /** The message to send in one write: {@value #SIZE_GID} bytes with a GID, {@value #SIZE_NO_GID} without. */
    public byte[] encode() {
        byte[] t = text().getBytes(StandardCharsets.US_ASCII);
        byte[] msg = new byte[size(gid != null)];
        if (t.length != msg.length - 1) {
            throw new IllegalStateException("perftest key text has " + t.length + " characters, expected " + (msg.length - 1));
        }
        System.arraycopy(t, 0, msg, 0, t.length);
        return msg;
    }

    /** Parses a received key message; its length says which form it is. */
    /**
     * With -R perftest sends struct pingpong_dest itself (perftest_resources.h), each field big-endian (htobe32,
     * htobe64 under HAVE_ENDIAN): int lid, out_reads, qpn, psn; unsigned rkey; 4 bytes of padding; u64 vaddr at 24;
     * the GID at 32; unsigned srqn at 48; int gid_index at 52; {@value #SIZE_BINARY} bytes in all.
     */
    public static final int SIZE_BINARY = 56;

    /** The binary message of rdma_write_keys; gid_index is sent as 0 (rdma_read_keys ignores it and srqn). */
    public byte[] encodeBinary() {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(SIZE_BINARY);
        b.putInt(0, lid).putInt(4, outReads).putInt(8, qpn).putInt(12, psn).putInt(16, rkey).putLong(24, vaddr);
        if (gid != null) {
            b.put(32, gid.bytes());
        }
        b.putInt(48, srqn);
        return b.array();
    }

    /**
     * Reads rdma_read_keys' fields from a binary message of {@value #SIZE_BINARY} bytes. LID, OUT_READS, QPN and PSN
     * travel as 32-bit ints: one past its 16 or 24 bits is refused (by the constructor), not cut to them, as the text
     * form's are.
     */
    public static PerftestDest decodeBinary(byte[] msg) {
        if (msg.length != SIZE_BINARY) {
            throw new IllegalArgumentException("a binary key message has " + SIZE_BINARY + " bytes, got " + msg.length);
        }
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(msg);
        byte[] g = new byte[Gid.LENGTH];
        b.get(32, g);
        return new PerftestDest(b.getInt(0), b.getInt(4), b.getInt(8), b.getInt(12), b.getInt(16), b.getLong(24),
                Gid.of(g), b.getInt(48));
    }

    public static PerftestDest decode(byte[] msg) {
        boolean withGid;
        if (msg.length == SIZE_GID) {
            withGid = true;
        } else if (msg.length == SIZE_NO_GID) {
            withGid = false;
        } else {
            throw new IllegalArgumentException("perftest key message must be " + SIZE_GID + " or " + SIZE_NO_GID
                    + " bytes, got " + msg.length);
        }
        if (msg[msg.length - 1] != 0) {
            throw new IllegalArgumentException("perftest key message is not NUL-terminated");
        }
        int nul = 0;
        while (msg[nul] != 0) {
            nul++;
        }
        String s = new String(msg, 0, nul, StandardCharsets.US_ASCII);
        String[] f = s.split(":", -1);
        int expected = withGid ? 6 + 16 + 1 + 1 : 7; // with a GID the text ends with ':' so split yields a last ""
        if (f.length != expected || (withGid && !f[expected - 1].isEmpty())) {
            throw new IllegalArgumentException("perftest key '" + s + "' does not have the "
                    + (withGid ? "LID:OUT_READS:QPN:PSN:RKEY:VADDR:16 GID bytes:SRQN:" : "LID:OUT_READS:QPN:PSN:RKEY:VADDR:SRQN")
                    + " fields");
        }
        int lid = PingpongDest.hex("LID", f[0], 0xFFFF);
        int outReads = PingpongDest.hex("OUT_READS", f[1], 0xFFFF);
        int qpn = PingpongDest.hex("QPN", f[2], 0xFFFFFF);
        int psn = PingpongDest.hex("PSN", f[3], 0xFFFFFF);
        int rkey = PingpongDest.hex("RKEY", f[4], 0xFFFFFFFFL);
        if (f[5].isEmpty() || f[5].length() > 16 || !PingpongDest.isHex(f[5])) {
            throw new IllegalArgumentException("VADDR '" + f[5] + "' is not a 64-bit hex number");
        }
        long vaddr = Long.parseUnsignedLong(f[5], 16);
        Gid gid = null;
        int srqnField = 6;
        if (withGid) {
            byte[] g = new byte[Gid.LENGTH];
            for (int i = 0; i < Gid.LENGTH; i++) {
                g[i] = (byte) PingpongDest.hex("GID byte " + i, f[6 + i], 0xFF);
            }
            gid = Gid.of(g);
            srqnField = 22;
        }
        int srqn = PingpongDest.hex("SRQN", f[srqnField], 0xFFFFFFFFL);
        return new PerftestDest(lid, outReads, qpn, psn, rkey, vaddr, gid, srqn);
    }

    private static String hex(long v, int width) {
        return CFormat.pad(Long.toHexString(v), width);
    }

    private static void range(String what, int v, int max) {
        if (v < 0 || v > max) {
            throw new IllegalArgumentException(what + " " + v + " out of range 0..0x" + Integer.toHexString(max));
        }
    }
}
