package io.jhca.mlx5.cmd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.jhca.connectx.DirectCmdMemory;

/**
 * A command queue whose device was declared dead sends it nothing: commands that only release something are answered
 * by the driver with an all-zero output (status OK), the others fail naming the command and the reason (mlx5_core
 * cmd.c {@code mlx5_internal_err_ret_value}).
 */
class DeadDeviceCommandsTest {

    private FakeFirmware fw;

    @AfterEach
    void tearDown() throws Exception {
        fw.close();
    }

    private CmdQueue open() {
        DirectCmdMemory memory = DirectCmdMemory.withIovaBase(0x4000_0000L);
        fw = new FakeFirmware(memory, 5, 6);
        return CmdQueue.open(new InitSegment(fw), memory, CmdQueueOptions.defaults().timeoutMillis(10_000));
    }

    @Test
    void releasingCommandsSucceedWithoutTheDeviceAndTheOthersFail() {
        CmdQueue q = open();
        q.declareDead("gone for the test");
        q.declareDead("a later reason");
        assertEquals("gone for the test", q.deadReason(), "the first reason stays");

        for (int opcode : List.of(CmdOpcode.DESTROY_CQ, CmdOpcode.DESTROY_QP, CmdOpcode.QP_2RST, CmdOpcode.DEALLOC_PD,
                CmdOpcode.DESTROY_MKEY, CmdOpcode.TEARDOWN_HCA, CmdOpcode.MANAGE_PAGES)) {
            UnsafeBuffer in = new UnsafeBuffer(new byte[16]);
            in.putShort(0, (short) opcode, java.nio.ByteOrder.BIG_ENDIAN); // mbox_in opcode[0x10]
            UnsafeBuffer out = new UnsafeBuffer(new byte[16]);
            out.setMemory(0, 16, (byte) 0x5a);
            q.execute(in, 16, out, 16);
            for (int i = 0; i < 16; i++) {
                assertEquals(0, out.getByte(i), CmdOpcode.name(opcode) + " output byte " + i);
            }
        }
        for (int opcode : List.of(CmdOpcode.ALLOC_PD, CmdOpcode.CREATE_QP, CmdOpcode.RTR2RTS_QP,
                CmdOpcode.QUERY_Q_COUNTER)) {
            UnsafeBuffer in = new UnsafeBuffer(new byte[16]);
            in.putShort(0, (short) opcode, java.nio.ByteOrder.BIG_ENDIAN); // mbox_in opcode[0x10]
            DeviceDeadException e = assertThrows(DeviceDeadException.class,
                    () -> q.execute(in, 16, new UnsafeBuffer(new byte[16]), 16));
            assertEquals(opcode, e.opcode());
            assertTrue(e.getMessage().startsWith(CmdOpcode.name(opcode) + "(")
                    && e.getMessage().contains("not posted: device not responding: gone for the test"), e.getMessage());
        }
        assertTrue(fw.seen.isEmpty(), "the device saw no command");
        assertTrue(fw.doorbellValues.isEmpty(), "no doorbell was rung");
    }
}
