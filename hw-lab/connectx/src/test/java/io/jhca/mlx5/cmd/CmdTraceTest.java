package io.jhca.mlx5.cmd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.regex.Pattern;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.jhca.connectx.DirectCmdMemory;

/**
 * Command dumps in mlx5_core's format (cmd.c dump_command / dump_buf, kernel 5.13+), checked line by line against
 * the format's grammar and against samples under test resources cmd/. The samples were checked by hand, e.g. in
 * trace-full.txt: entry row 030 of ENABLE_HCA ends in {@code 0000000c 01e10001} = outlen 12, token 1, sig
 * 0xe1 = ~(07^10^01^04^0c^01^01), status_own 1 (then 0 in the OUTPUT dump); QUERY_ISSI's output mailbox sits at
 * IOVA 0x101000 (page at 0x100000), its supported_issi_dw0 (message byte 0x6c = block byte 0x5c) prints at
 * 0x40 + 0x5c = 0x09c, and the block's token byte at 0x40 + 0x23d; in trace-data.txt CREATE_CQ shows log_cq_size
 * 10 / uar_page 0x123 as {@code 0a000123} at 0x01c, dbr_addr at 0x048 and the two PAS at 0x110, with
 * min(512, 288 - 16) = 272 bytes = 17 rows of mailbox data.
 */
class CmdTraceTest {

    private static final Pattern ROW = Pattern.compile(
            "cmd\\[\\d+]: [0-9a-f]{3,}: [0-9a-f]{8} [0-9a-f]{8} [0-9a-f]{8} [0-9a-f]{8}");
    private static final Pattern HEADER = Pattern.compile(
            "cmd\\[\\d+]: (start dump|end dump|command block:"
                    + "|dump command (data )?[A-Z0-9_a-z ]+\\(0x[0-9a-f]+\\) (INPUT|OUTPUT))");

    private final List<String> lines = Collections.synchronizedList(new ArrayList<>());
    private FakeFirmware fw;

    private CmdQueue open(CmdTrace.Mode mode) {
        // IOVAs from a fixed base so pointers in the dump are reproducible
        DirectCmdMemory mem = DirectCmdMemory.withIovaBase(0x10_0000L);
        fw = new FakeFirmware(mem, 5, 6);
        return CmdQueue.open(new InitSegment(fw), mem,
                CmdQueueOptions.defaults().trace(CmdTrace.of(lines::add, mode)));
    }

    @AfterEach
    void tearDown() {
        if (fw != null) {
            fw.close();
        }
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = CmdTraceTest.class.getResourceAsStream("/cmd/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private String text() {
        return String.join("\n", lines) + "\n";
    }

    private void assertGrammar() {
        for (String l : lines) {
            assertTrue(l.isEmpty() || ROW.matcher(l).matches() || HEADER.matcher(l).matches()
                    || l.contains(" failed, status ") || l.contains(" not delivered, "), "not mlx5_core format: " + l);
        }
    }

    @Test
    void fullDumpMatchesSample() throws IOException {
        CmdQueue q = open(CmdTrace.Mode.FULL);
        UnsafeBuffer in = new UnsafeBuffer(new byte[16]);
        new Struct().wrap(HcaLayouts.ENABLE_HCA_IN, in, 0).clear().set("opcode", CmdOpcode.ENABLE_HCA);
        q.execute(in, 16, new UnsafeBuffer(new byte[12]), 12);

        CmdHeader.start(in, 0, 16, CmdOpcode.QUERY_ISSI, 0);
        q.execute(in, 16, new UnsafeBuffer(new byte[112]), 112);

        fw.fail(CmdOpcode.DESTROY_CQ, CmdStatus.BAD_RES_STATE_ERR.value(), 0x12345678);
        new Struct().wrap(CqLayouts.DESTROY_CQ_IN, in, 0).clear().set("opcode", CmdOpcode.DESTROY_CQ).set("cqn", 0x81);
        assertThrows(CommandException.class, () -> q.execute(in, 16, new UnsafeBuffer(new byte[16]), 16));

        assertGrammar();
        assertEquals(resource("trace-full.txt"), text());
    }

    @Test
    void dataDumpMatchesSample() throws IOException {
        CmdQueue q = open(CmdTrace.Mode.DATA);
        UnsafeBuffer in = new UnsafeBuffer(new byte[CqLayouts.CREATE_CQ_IN.sizeBytes(2)]);
        Struct s = new Struct().wrap(CqLayouts.CREATE_CQ_IN, in, 0, in.capacity()).clear()
                .set("opcode", CmdOpcode.CREATE_CQ)
                .set("cq_context.log_cq_size", 10)
                .set("cq_context.uar_page", 0x123)
                .set("cq_context.c_eqn_or_apu_element", 7)
                .set("cq_context.log_page_size", 1)
                .set("cq_context.dbr_addr", 0x7f0040L)
                .setElement("pas", 0, 0x200000L)
                .setElement("pas", 1, 0x202000L);
        q.execute(s, new Struct().wrap(CqLayouts.CREATE_CQ_OUT, new UnsafeBuffer(new byte[16]), 0));
        assertGrammar();
        assertEquals(resource("trace-data.txt"), text());
    }

    @Test
    void traceSwitchesAtRunTime() {
        CmdQueue q = open(CmdTrace.Mode.FULL);
        UnsafeBuffer in = new UnsafeBuffer(new byte[16]);
        CmdHeader.start(in, 0, 16, CmdOpcode.ALLOC_PD, 0);
        q.trace(null);
        q.execute(in, 16, new UnsafeBuffer(new byte[16]), 16);
        assertTrue(lines.isEmpty());
        q.trace(CmdTrace.of(lines::add, CmdTrace.Mode.DATA));
        q.execute(in, 16, new UnsafeBuffer(new byte[16]), 16);
        assertEquals(List.of(
                "cmd[0]: start dump",
                "cmd[0]: dump command data ALLOC_PD(0x800) INPUT",
                "cmd[0]: 000: 08000000 00000000 00000000 00000000",
                "",
                "cmd[0]: end dump",
                "cmd[0]: start dump",
                "cmd[0]: dump command data ALLOC_PD(0x800) OUTPUT",
                "cmd[0]: 000: 00000000 00000000 00000011 00000000",
                "",
                "cmd[0]: end dump"), lines);
    }
}
