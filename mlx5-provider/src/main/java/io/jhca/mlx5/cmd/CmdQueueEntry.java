package io.jhca.mlx5.cmd;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.AtomicBuffer;

/**
 * Flyweight over one 64-byte command queue entry (kernel device.h {@code struct mlx5_cmd_layout}; offsets checked
 * against the header by a golden test). Used by both the driver ({@link CmdQueue}) and the device model
 * (module jhca-connectx, {@code io.jhca.connectx.CmdQueueDevice}), so there is one implementation of the format. All multi-byte fields are big-endian.
 *
 * <pre>
 * 0x00 type (7 = PCIe)   0x04 inlen        0x08 in_ptr (first input mailbox)
 * 0x10 in[16]  first 16 bytes of the input          0x20 out[16]  first 16 bytes of the output
 * 0x30 out_ptr           0x38 outlen       0x3c token  0x3d sig  0x3e rsvd  0x3f status_own
 * </pre>
 * status_own: bit 0 ownership (1 = device owns the entry), bits 7:1 delivery status.
 */
public final class CmdQueueEntry {

    public static final int SIZE = 64;
    public static final int TYPE = 0x00;
    public static final int INLEN = 0x04;
    public static final int IN_PTR = 0x08;
    public static final int IN = 0x10;
    public static final int OUT = 0x20;
    public static final int OUT_PTR = 0x30;
    public static final int OUTLEN = 0x38;
    public static final int TOKEN = 0x3c;
    public static final int SIG = 0x3d;
    public static final int STATUS_OWN = 0x3f;

    /** Bytes of input and of output carried inline in the entry. */
    public static final int INLINE_SIZE = 16;
    /** device.h {@code MLX5_PCI_CMD_XPORT}. */
    public static final int TYPE_PCIE = 7;
    /** driver.h {@code CMD_OWNER_HW}. */
    public static final int OWNER_HW = 0x1;

    private AtomicBuffer buffer;
    private int offset;

    public CmdQueueEntry wrap(AtomicBuffer buffer, int offset) {
        if (offset < 0 || offset + SIZE > buffer.capacity()) {
            throw new IndexOutOfBoundsException("command entry at " + offset + " outside " + buffer.capacity()
                    + " bytes");
        }
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public AtomicBuffer buffer() {
        return buffer;
    }

    public int offset() {
        return offset;
    }

    public void clear() {
        buffer.setMemory(offset, SIZE, (byte) 0);
    }

    public int type() {
        return buffer.getByte(offset + TYPE) & 0xff;
    }

    public CmdQueueEntry type(int type) {
        buffer.putByte(offset + TYPE, (byte) type);
        return this;
    }

    public int inLength() {
        return buffer.getInt(offset + INLEN, ByteOrder.BIG_ENDIAN);
    }

    public CmdQueueEntry inLength(int length) {
        buffer.putInt(offset + INLEN, length, ByteOrder.BIG_ENDIAN);
        return this;
    }

    public long inPointer() {
        return buffer.getLong(offset + IN_PTR, ByteOrder.BIG_ENDIAN);
    }

    public CmdQueueEntry inPointer(long iova) {
        buffer.putLong(offset + IN_PTR, iova, ByteOrder.BIG_ENDIAN);
        return this;
    }

    public long outPointer() {
        return buffer.getLong(offset + OUT_PTR, ByteOrder.BIG_ENDIAN);
    }

    public CmdQueueEntry outPointer(long iova) {
        buffer.putLong(offset + OUT_PTR, iova, ByteOrder.BIG_ENDIAN);
        return this;
    }

    public int outLength() {
        return buffer.getInt(offset + OUTLEN, ByteOrder.BIG_ENDIAN);
    }

    public CmdQueueEntry outLength(int length) {
        buffer.putInt(offset + OUTLEN, length, ByteOrder.BIG_ENDIAN);
        return this;
    }

    public int token() {
        return buffer.getByte(offset + TOKEN) & 0xff;
    }

    public CmdQueueEntry token(int token) {
        buffer.putByte(offset + TOKEN, (byte) token);
        return this;
    }

    public int signature() {
        return buffer.getByte(offset + SIG) & 0xff;
    }

    /** Copies up to 16 bytes of the command input into the inline area (the rest stays zero). */
    public void putInlineInput(DirectBuffer src, int srcOffset, int length) {
        buffer.setMemory(offset + IN, INLINE_SIZE, (byte) 0);
        buffer.putBytes(offset + IN, src, srcOffset, Math.min(length, INLINE_SIZE));
    }

    /** Copies up to 16 bytes of the inline input out. */
    public void getInlineInput(MutableDirectBuffer dst, int dstOffset, int length) {
        dst.putBytes(dstOffset, buffer, offset + IN, Math.min(length, INLINE_SIZE));
    }

    /** Copies up to 16 bytes of output into the inline area (device side). */
    public void putInlineOutput(DirectBuffer src, int srcOffset, int length) {
        buffer.setMemory(offset + OUT, INLINE_SIZE, (byte) 0);
        buffer.putBytes(offset + OUT, src, srcOffset, Math.min(length, INLINE_SIZE));
    }

    /** Copies up to 16 bytes of the inline output out. */
    public void getInlineOutput(MutableDirectBuffer dst, int dstOffset, int length) {
        dst.putBytes(dstOffset, buffer, offset + OUT, Math.min(length, INLINE_SIZE));
    }

    /** Volatile read of status_own: use it to poll for ownership, it orders the reads that follow. */
    public int statusOwn() {
        return buffer.getByteVolatile(offset + STATUS_OWN) & 0xff;
    }

    /** Volatile write of status_own: everything written to the entry before is visible once this is. */
    public CmdQueueEntry statusOwn(int value) {
        buffer.putByteVolatile(offset + STATUS_OWN, (byte) value);
        return this;
    }

    public boolean ownedByDevice() {
        return (statusOwn() & OWNER_HW) != 0;
    }

    /** Delivery status, status_own bits 7:1. */
    public int deliveryStatus() {
        return statusOwn() >>> 1;
    }

    /** mlx5_core set_signature: sig = ~XOR of the 64 bytes with sig itself zero. */
    public void sign() {
        buffer.putByte(offset + SIG, (byte) 0);
        buffer.putByte(offset + SIG, (byte) ~xor(buffer, offset, SIZE));
    }

    /**
     * Signs the entry as it will read once status_own holds {@code statusOwn} (device side: the signature must
     * cover the final status byte, which is written last to hand the entry back).
     */
    public void signFor(int statusOwn) {
        buffer.putByte(offset + SIG, (byte) 0);
        int x = xor(buffer, offset, SIZE) ^ (buffer.getByte(offset + STATUS_OWN) & 0xff) ^ (statusOwn & 0xff);
        buffer.putByte(offset + SIG, (byte) ~x);
    }

    /** mlx5_core verify_signature: the XOR of all 64 bytes must be 0xff. */
    public boolean signatureValid() {
        return xor(buffer, offset, SIZE) == 0xff;
    }

    static int xor(DirectBuffer b, int from, int length) {
        int x = 0;
        for (int i = 0; i < length; i++) {
            x ^= b.getByte(from + i);
        }
        return x & 0xff;
    }
}
