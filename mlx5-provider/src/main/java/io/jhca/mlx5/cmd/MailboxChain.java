package io.jhca.mlx5.cmd;

import java.util.ArrayList;
import java.util.List;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * The driver's mailboxes for one direction of one queue slot: grown on demand, kept for reuse. For each command
 * {@link #prepare} links exactly the blocks the message needs (block_num 0..n-1, next pointers, token) and clears
 * their data, so unused bytes are zero and traces are clean.
 */
final class MailboxChain {

    private final CmdMemory memory;
    private final List<DmaBlock> blocks = new ArrayList<>();
    private final Mailbox mailbox = new Mailbox();
    private int used;

    MailboxChain(CmdMemory memory) {
        this.memory = memory;
    }

    /** Links the blocks for a message of {@code length} bytes (16 inline + the rest in mailboxes). */
    void prepare(int length, int token) {
        int n = Mailbox.blocksFor(length);
        while (blocks.size() < n) {
            blocks.add(memory.allocate(Mailbox.SIZE, Mailbox.ALIGNMENT));
        }
        for (int i = 0; i < n; i++) {
            DmaBlock b = blocks.get(i);
            b.buffer().setMemory(0, Mailbox.SIZE, (byte) 0);
            mailbox.wrap(b.buffer(), 0)
                    .blockNumber(i)
                    .next(i + 1 < n ? blocks.get(i + 1).iova() : 0L)
                    .token(token);
        }
        used = n;
    }

    int used() {
        return used;
    }

    DmaBlock block(int i) {
        return blocks.get(i);
    }

    /** IOVA of block 0, or 0 when the message fits inline (the entry's in_ptr/out_ptr). */
    long firstIova() {
        return used == 0 ? 0L : blocks.get(0).iova();
    }

    /** Scatters bytes [16, length) of the message into the data areas. */
    void write(DirectBuffer src, int srcOffset, int length) {
        int pos = CmdQueueEntry.INLINE_SIZE;
        for (int i = 0; i < used && pos < length; i++) {
            int n = Math.min(Mailbox.DATA_SIZE, length - pos);
            blocks.get(i).buffer().putBytes(0, src, srcOffset + pos, n);
            pos += n;
        }
    }

    /** Gathers bytes [16, length) of the message from the data areas. */
    void read(MutableDirectBuffer dst, int dstOffset, int length) {
        int pos = CmdQueueEntry.INLINE_SIZE;
        for (int i = 0; i < used && pos < length; i++) {
            int n = Math.min(Mailbox.DATA_SIZE, length - pos);
            dst.putBytes(dstOffset + pos, blocks.get(i).buffer(), 0, n);
            pos += n;
        }
    }

    void sign() {
        for (int i = 0; i < used; i++) {
            mailbox.wrap(blocks.get(i).buffer(), 0).sign();
        }
    }

    boolean signaturesValid() {
        for (int i = 0; i < used; i++) {
            if (!mailbox.wrap(blocks.get(i).buffer(), 0).signaturesValid()) {
                return false;
            }
        }
        return true;
    }

    void free() {
        for (DmaBlock b : blocks) {
            memory.free(b);
        }
        blocks.clear();
        used = 0;
    }
}
