package io.jhca.mlx5.cmd;

import java.nio.ByteOrder;

import org.agrona.MutableDirectBuffer;

/**
 * Flyweight over one command mailbox block (kernel device.h {@code struct mlx5_cmd_prot_block}, 576 bytes; offsets
 * checked by a golden test): 512 data bytes, then the chain control. Inputs and outputs longer than the 16 inline
 * bytes continue here, block after block ({@code next} is the IOVA of the next block, 0 at the end;
 * {@code block_num} counts 0, 1, 2... in chain order). Every multi-byte field is big-endian.
 *
 * <pre>
 * 0x000 data[512]   0x200 rsvd[48]   0x230 next (be64)   0x238 block_num (be32)
 * 0x23c rsvd   0x23d token   0x23e ctrl_sig   0x23f sig
 * </pre>
 */
public final class Mailbox {

    public static final int SIZE = 576;
    public static final int DATA_SIZE = 512;
    public static final int NEXT = 0x230;
    public static final int BLOCK_NUM = 0x238;
    public static final int TOKEN = 0x23d;
    public static final int CTRL_SIG = 0x23e;
    public static final int SIG = 0x23f;
    /** Device alignment of a block: mlx5_core's dma_pool uses roundup_pow_of_two(576) = 1024. */
    public static final int ALIGNMENT = 1024;

    private MutableDirectBuffer buffer;
    private int offset;

    /** Number of mailboxes a message of {@code length} bytes needs beyond the 16 inline bytes. */
    public static int blocksFor(int length) {
        int rest = length - CmdQueueEntry.INLINE_SIZE;
        return rest <= 0 ? 0 : (rest + DATA_SIZE - 1) / DATA_SIZE;
    }

    public Mailbox wrap(MutableDirectBuffer buffer, int offset) {
        if (offset < 0 || offset + SIZE > buffer.capacity()) {
            throw new IndexOutOfBoundsException("mailbox at " + offset + " outside " + buffer.capacity() + " bytes");
        }
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public MutableDirectBuffer buffer() {
        return buffer;
    }

    public int offset() {
        return offset;
    }

    public long next() {
        return buffer.getLong(offset + NEXT, ByteOrder.BIG_ENDIAN);
    }

    public Mailbox next(long iova) {
        buffer.putLong(offset + NEXT, iova, ByteOrder.BIG_ENDIAN);
        return this;
    }

    public int blockNumber() {
        return buffer.getInt(offset + BLOCK_NUM, ByteOrder.BIG_ENDIAN);
    }

    public Mailbox blockNumber(int n) {
        buffer.putInt(offset + BLOCK_NUM, n, ByteOrder.BIG_ENDIAN);
        return this;
    }

    public int token() {
        return buffer.getByte(offset + TOKEN) & 0xff;
    }

    public Mailbox token(int token) {
        buffer.putByte(offset + TOKEN, (byte) token);
        return this;
    }

    public int ctrlSignature() {
        return buffer.getByte(offset + CTRL_SIG) & 0xff;
    }

    public int signature() {
        return buffer.getByte(offset + SIG) & 0xff;
    }

    /** Zeroes the data area. */
    public void clearData() {
        buffer.setMemory(offset, DATA_SIZE, (byte) 0);
    }

    /**
     * mlx5_core calc_block_sig: ctrl_sig = ~XOR(bytes 0x200..0x23d), then sig = ~XOR(bytes 0x000..0x23e).
     * Only needed when command checksums are enabled (cmd_hca_cap.cmdif_checksum).
     */
    public void sign() {
        buffer.putByte(offset + CTRL_SIG, (byte) ~CmdQueueEntry.xor(buffer, offset + DATA_SIZE, SIZE - DATA_SIZE - 2));
        buffer.putByte(offset + SIG, (byte) ~CmdQueueEntry.xor(buffer, offset, SIZE - 1));
    }

    /** mlx5_core verify_block_sig: XOR over 0x200..0x23e and over the whole block must both be 0xff. */
    public boolean signaturesValid() {
        return CmdQueueEntry.xor(buffer, offset + DATA_SIZE, SIZE - DATA_SIZE - 1) == 0xff
                && CmdQueueEntry.xor(buffer, offset, SIZE) == 0xff;
    }
}
