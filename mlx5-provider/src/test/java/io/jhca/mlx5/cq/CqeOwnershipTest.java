package io.jhca.mlx5.cq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/** rdma-core cq.c get_sw_cqe: software owns entry n iff opcode != INVALID and owner bit == !!(n & ncqe). */
class CqeOwnershipTest {

    private static final int NCQE = 4;

    @Test
    void ownerBitMustEqualWrapParityOfTheConsumerIndex() {
        for (int ci = 0; ci < 4 * NCQE; ci++) {
            int parity = (ci / NCQE) & 1;
            int req = CqeOpcode.REQ << 4;
            assertEquals(parity == 0, Cqe64.isSoftwareOwned(req, ci, NCQE), "owner 0 at ci " + ci);
            assertEquals(parity == 1, Cqe64.isSoftwareOwned(req | 1, ci, NCQE), "owner 1 at ci " + ci);
            // the other op_own bits (SE, format) do not matter
            assertEquals(parity == 1, Cqe64.isSoftwareOwned(CqeOpcode.RESP_SEND << 4 | 0xe | 1, ci, NCQE), "ci " + ci);
        }
    }

    @Test
    void invalidOpcodeIsNeverSoftwareOwned() {
        // rdma-core initialises CQEs to 0xf0 (INVALID, owner 0): not software-owned on the first pass
        assertFalse(Cqe64.isSoftwareOwned(0xf0, 0, NCQE));
        assertFalse(Cqe64.isSoftwareOwned(0xf1, NCQE, NCQE));
        // the kernel's 0xf1 is hardware-owned by the owner bit alone on the first pass
        assertFalse(Cqe64.isSoftwareOwned(0xf1, 0, NCQE));
        assertTrue(Cqe64.isSoftwareOwned(0xd0, 0, NCQE), "REQ_ERR is a completion like any other");
    }

    @Test
    void flyweightOverARing() {
        UnsafeBuffer ring = new UnsafeBuffer(new byte[NCQE * 64]);
        for (int i = 0; i < NCQE; i++) {
            ring.putByte(i * 64 + 63, (byte) 0xf0);
        }
        Cqe64 cqe = new Cqe64();
        assertFalse(cqe.wrap(ring, 64).isSoftwareOwned(1, NCQE));
        ring.putByte(64 + 63, (byte) (CqeOpcode.RESP_SEND_IMM << 4 | 0x2));
        assertTrue(cqe.isSoftwareOwned(1, NCQE));
        assertEquals(CqeOpcode.RESP_SEND_IMM, cqe.opcode());
        assertEquals(1, cqe.se());
        assertFalse(cqe.isSoftwareOwned(1 + NCQE, NCQE), "same slot on the next pass needs owner 1");
        assertThrows(IndexOutOfBoundsException.class, () -> cqe.wrap(ring, NCQE * 64 - 32));
        assertThrows(IndexOutOfBoundsException.class, () -> new ErrCqe().wrap(ring, -1));
    }
}
