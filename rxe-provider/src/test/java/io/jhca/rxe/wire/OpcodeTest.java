package io.jhca.rxe.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Opcode values against third-party headers compiled with gcc: rdma-core's {@code infiniband/opcode.h}
 * (libibverbs-dev) and the kernel's {@code rdma/ib_pack.h} enum (linux-headers; it includes kernel-only headers,
 * so its opcode enum and macro are cut out and compiled alone). Per-opcode flags against rocev2.md §1.4.
 */
class OpcodeTest {

    private static final Pattern ENTRY = Pattern.compile("IB[V]?_OPCODE\\((\\w+),\\s*(\\w+)\\)");

    @TempDir
    Path dir;

    /** Compiles {@code source}, runs it and returns "NAME VALUE" lines as a map. */
    private Map<String, Integer> compileAndRun(final String source) throws Exception {
        final Path c = dir.resolve("opcodes.c");
        final Path exe = dir.resolve("opcodes");
        Files.writeString(c, source);
        final TestSupport.Result cc = TestSupport.run("gcc", List.of("gcc", "-o", exe.toString(), c.toString()), 60);
        assertEquals(0, cc.exitCode(), cc.stderr());
        final TestSupport.Result run = TestSupport.run("gcc", List.of(exe.toString()), 30);
        assertEquals(0, run.exitCode(), run.stderr());
        final Map<String, Integer> values = new LinkedHashMap<>();
        for (final String line : run.stdout().lines().toList()) {
            final String[] parts = line.split(" ");
            values.put(parts[0], Integer.parseInt(parts[1]));
        }
        return values;
    }

    private static String program(final String prelude, final String prefix, final List<String> names) {
        final StringBuilder s = new StringBuilder("#include <stdio.h>\n").append(prelude)
                .append("\nint main(void) {\n");
        for (final String n : names) {
            s.append("    printf(\"%s %d\\n\", \"").append(n).append("\", (int) ").append(prefix).append(n)
                    .append(");\n");
        }
        return s.append("    return 0;\n}\n").toString();
    }

    private static List<String> entries(final String text) {
        final List<String> names = new ArrayList<>();
        final Matcher m = ENTRY.matcher(text);
        while (m.find()) {
            if (!m.group(1).equals("transport")) { // skip the macro's own definition
                names.add(m.group(1) + "_" + m.group(2));
            }
        }
        return names;
    }

    private static void assertSameAsOurs(final Map<String, Integer> theirs, final String source) {
        assertTrue(theirs.size() > 40, "too few opcodes parsed from " + source + ": " + theirs);
        theirs.forEach((name, value) -> {
            assertEquals(name, Opcode.name(value), source + " value 0x" + Integer.toHexString(value));
            assertEquals(!name.startsWith("RD_"), Opcode.isValid(value), name + " valid");
            assertTrue(Opcode.isKnown(value), name);
        });
    }

    @Test
    void rdmaCoreOpcodeHeader() throws Exception {
        final Path header = Path.of("/usr/include/infiniband/opcode.h");
        if (!Files.exists(header)) {
            fail(header + " missing: install the 'libibverbs-dev' package");
        }
        final List<String> names = entries(Files.readString(header));
        assertSameAsOurs(compileAndRun(program("#include <infiniband/opcode.h>", "IBV_OPCODE_", names)),
                header.toString());
    }

    @Test
    void kernelIbPackEnum() throws Exception {
        final Path header = kernelIbPack();
        final String text = Files.readString(header);
        final int start = text.indexOf("#define IB_OPCODE(");
        final int enumEnd = text.indexOf("};", text.indexOf("IB_OPCODE(UD, SEND_ONLY_WITH_IMMEDIATE)"));
        assertTrue(start >= 0 && enumEnd > start, "opcode enum not found in " + header);
        final String cut = text.substring(start, enumEnd + 2);
        final List<String> names = entries(cut);
        final Map<String, Integer> theirs = compileAndRun(program(cut, "IB_OPCODE_", names));
        assertSameAsOurs(theirs, header.toString());
        // The kernel knows the *_WITH_INVALIDATE sends; every RC/UC/UD opcode it names is VALID here and back.
        assertEquals(0x17, theirs.get("RC_SEND_ONLY_WITH_INVALIDATE"));
        final TreeSet<Integer> kernelValid = new TreeSet<>();
        theirs.forEach((n, v) -> {
            if (!n.startsWith("RD_")) {
                kernelValid.add(v);
            }
        });
        final TreeSet<Integer> ours = new TreeSet<>(ScapyOracleTest.validOpcodes());
        assertEquals(kernelValid, ours);
    }

    private static Path kernelIbPack() throws IOException {
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(Path.of("/usr/src"), "linux-headers-*")) {
            for (final Path d : dirs) {
                final Path h = d.resolve("include/rdma/ib_pack.h");
                if (Files.exists(h)) {
                    return h;
                }
            }
        } catch (final java.nio.file.NoSuchFileException e) {
            // fall through
        }
        return fail("include/rdma/ib_pack.h not found under /usr/src/linux-headers-*: install 'linux-headers-amd64'");
    }

    @Test
    void layoutsAndFlagsFollowRxeOpcodeTable() {
        // Header lengths after the BTH (rxe_opcode.c .length - 12), spot checks of every shape.
        assertEquals(0, Opcode.headerLength(Opcode.RC_SEND_FIRST));
        assertEquals(4, Opcode.headerLength(Opcode.RC_SEND_LAST_WITH_IMMEDIATE));
        assertEquals(16, Opcode.headerLength(Opcode.RC_RDMA_WRITE_FIRST));
        assertEquals(20, Opcode.headerLength(Opcode.UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE));
        assertEquals(12, Opcode.rethOffset(Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE));
        assertEquals(28, Opcode.immDtOffset(Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE));
        assertEquals(16, Opcode.headerLength(Opcode.RC_RDMA_READ_REQUEST));
        assertEquals(4, Opcode.headerLength(Opcode.RC_RDMA_READ_RESPONSE_FIRST));
        assertEquals(0, Opcode.headerLength(Opcode.RC_RDMA_READ_RESPONSE_MIDDLE));
        assertEquals(12, Opcode.headerLength(Opcode.RC_ATOMIC_ACKNOWLEDGE));
        assertEquals(12, Opcode.aethOffset(Opcode.RC_ATOMIC_ACKNOWLEDGE));
        assertEquals(16, Opcode.atomicAckEthOffset(Opcode.RC_ATOMIC_ACKNOWLEDGE));
        assertEquals(28, Opcode.headerLength(Opcode.RC_FETCH_ADD));
        assertEquals(4, Opcode.headerLength(Opcode.RC_SEND_ONLY_WITH_INVALIDATE));
        assertEquals(8, Opcode.headerLength(Opcode.UD_SEND_ONLY));
        assertEquals(12, Opcode.headerLength(Opcode.UD_SEND_ONLY_WITH_IMMEDIATE));
        assertEquals(20, Opcode.immDtOffset(Opcode.UD_SEND_ONLY_WITH_IMMEDIATE));
        assertEquals(20, Opcode.headerLength(Opcode.RC_FLUSH));
        assertEquals(16, Opcode.rethOffset(Opcode.RC_FLUSH));
        assertEquals(Opcode.NO_HEADER, Opcode.rethOffset(Opcode.RC_SEND_ONLY));

        // rocev2.md §1.4: RWR by SEND_FIRST, SEND_ONLY*, WRITE_{LAST,ONLY}_WITH_IMMEDIATE;
        // COMP by SEND_LAST*, SEND_ONLY*, the write-with-immediates and the *_WITH_INVALIDATE sends.
        final TreeSet<String> rwr = new TreeSet<>();
        final TreeSet<String> comp = new TreeSet<>();
        for (final int op : ScapyOracleTest.validOpcodes()) {
            if (Opcode.consumesRecvWqe(op)) {
                rwr.add(Opcode.name(op));
            }
            if (Opcode.producesRecvCompletion(op)) {
                comp.add(Opcode.name(op));
            }
            // Every valid opcode is exactly one of FIRST, MIDDLE, LAST, ONLY and one of request, response.
            final int shapes = (Opcode.isFirst(op) ? 1 : 0) + (Opcode.isMiddle(op) ? 1 : 0)
                    + (Opcode.isLast(op) ? 1 : 0) + (Opcode.isOnly(op) ? 1 : 0);
            assertEquals(1, shapes, Opcode.name(op));
            assertTrue(Opcode.isRequest(op) ^ Opcode.isResponse(op), Opcode.name(op));
            assertEquals(Opcode.transport(op) == Opcode.TRANSPORT_UD, Opcode.dethOffset(op) >= 0);
        }
        final TreeSet<String> expectedRwr = new TreeSet<>();
        final TreeSet<String> expectedComp = new TreeSet<>();
        for (final String t : new String[] {"RC_", "UC_"}) {
            expectedRwr.addAll(List.of(t + "SEND_FIRST", t + "SEND_ONLY", t + "SEND_ONLY_WITH_IMMEDIATE",
                    t + "RDMA_WRITE_LAST_WITH_IMMEDIATE", t + "RDMA_WRITE_ONLY_WITH_IMMEDIATE"));
            expectedComp.addAll(List.of(t + "SEND_LAST", t + "SEND_LAST_WITH_IMMEDIATE", t + "SEND_ONLY",
                    t + "SEND_ONLY_WITH_IMMEDIATE", t + "RDMA_WRITE_LAST_WITH_IMMEDIATE",
                    t + "RDMA_WRITE_ONLY_WITH_IMMEDIATE"));
        }
        expectedRwr.addAll(List.of("RC_SEND_ONLY_WITH_INVALIDATE", "UD_SEND_ONLY", "UD_SEND_ONLY_WITH_IMMEDIATE"));
        expectedComp.addAll(List.of("RC_SEND_LAST_WITH_INVALIDATE", "RC_SEND_ONLY_WITH_INVALIDATE", "UD_SEND_ONLY",
                "UD_SEND_ONLY_WITH_IMMEDIATE"));
        assertEquals(expectedRwr, rwr);
        assertEquals(expectedComp, comp);

        assertTrue(Opcode.isAck(Opcode.RC_ACKNOWLEDGE) && Opcode.isAck(Opcode.RC_ATOMIC_ACKNOWLEDGE));
        assertFalse(Opcode.isAck(Opcode.RC_RDMA_READ_RESPONSE_ONLY));
        assertTrue(Opcode.isResponse(Opcode.RC_RDMA_READ_RESPONSE_ONLY));
        assertFalse(Opcode.isValid(Opcode.RC_FLUSH) || Opcode.isValid(Opcode.RC_ATOMIC_WRITE)
                || Opcode.isValid(Opcode.CNP) || Opcode.isValid(0x15) || Opcode.isValid(0x40));
        assertEquals("CNP", Opcode.name(0x81));
        assertEquals("RD_SEND_FIRST", Opcode.name(0x40));
        assertEquals("UNKNOWN_0x15", Opcode.name(0x15));
        assertEquals("UNKNOWN_0xFF", Opcode.name(-1));
        assertEquals(Opcode.TRANSPORT_UC, Opcode.transport(Opcode.UC_SEND_ONLY));
        assertEquals(Opcode.TRANSPORT_CNP, Opcode.transport(Opcode.CNP));
    }
}
