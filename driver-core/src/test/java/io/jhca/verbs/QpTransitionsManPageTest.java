package io.jhca.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Golden check against libibverbs itself: the required-attribute tables of the ibv_modify_qp(3) man page
 * (Reset-&gt;Init-&gt;RTR-&gt;RTS for UD, UC and RC), with each IBV_QP_* name resolved to its value by a C
 * program compiled against &lt;infiniband/verbs.h&gt;. Both come from libibverbs-dev; gcc compiles the probe.
 */
class QpTransitionsManPageTest {
    private static final Path MAN_PAGE = Path.of("/usr/share/man/man3/ibv_modify_qp.3.gz");
    private static final Pattern TYPE_LINE = Pattern.compile("For QP Transport Service Type.*IBV_QPT_([A-Z_]+)");
    private static final Pattern ROW_START = Pattern.compile("^(Init|RTR|RTS)\\b(.*)");
    private static final Pattern ATTR = Pattern.compile("IBV_QP_([A-Z_]+)");

    @Test
    void requiredMasksMatchIbvModifyQpManPage(@TempDir Path dir) throws Exception {
        Map<String, Integer> ibv = ibvMaskValues(dir);
        Map<String, Map<String, List<String>>> tables = parseManPage();

        String[] rows = {"Init", "RTR", "RTS"};
        QpState[][] transitions = {{QpState.RESET, QpState.INIT}, {QpState.INIT, QpState.RTR},
            {QpState.RTR, QpState.RTS}};
        for (QpType type : QpType.values()) {
            Map<String, List<String>> table = tables.get(type.name());
            assertTrue(table != null, "man page has no table for IBV_QPT_" + type + ": " + tables.keySet());
            for (int r = 0; r < rows.length; r++) {
                List<String> names = table.get(rows[r]);
                assertTrue(names != null && !names.isEmpty(), type + " row " + rows[r] + " missing: " + table);
                int expected = 0;
                for (String n : names) {
                    Integer v = ibv.get(n);
                    assertTrue(v != null, "verbs.h has no IBV_QP_" + n);
                    expected |= v;
                }
                QpState cur = transitions[r][0];
                QpState next = transitions[r][1];
                assertEquals(QpAttrMask.describe(expected), QpAttrMask.describe(
                    QpTransitions.requiredMask(type, cur, next)), type + " " + cur + "->" + next);
                QpTransitions.check(type, cur, next, expected);
            }
        }
    }

    /** The mask names QpTransitions relies on have libibverbs' values. */
    @Test
    void attrMaskConstantsMatchVerbsH(@TempDir Path dir) throws Exception {
        Map<String, Integer> ibv = ibvMaskValues(dir);
        for (Map.Entry<String, Integer> e : maskFields().entrySet()) {
            assertEquals(ibv.get(e.getKey()), e.getValue(), "QpAttrMask." + e.getKey() + " vs IBV_QP_" + e.getKey());
        }
    }

    /** type (UD, UC, RC, ...) -&gt; row (Init, RTR, RTS) -&gt; attribute names without the IBV_QP_ prefix. */
    private static Map<String, Map<String, List<String>>> parseManPage() throws IOException {
        if (!Files.isReadable(MAN_PAGE)) {
            fail("ibv_modify_qp(3) man page not found at " + MAN_PAGE
                + ": install libibverbs-dev (and make sure dpkg does not exclude /usr/share/man)");
        }
        String text;
        try (InputStream in = new GZIPInputStream(Files.newInputStream(MAN_PAGE))) {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Map<String, Map<String, List<String>>> tables = new LinkedHashMap<>();
        Map<String, List<String>> table = null;
        List<String> row = null;
        for (String line : text.split("\n")) {
            Matcher t = TYPE_LINE.matcher(line);
            if (t.find()) {
                table = new LinkedHashMap<>();
                tables.put(t.group(1), table);
                row = null;
                continue;
            }
            if (table == null) {
                continue;
            }
            if (line.startsWith(".fi")) {
                table = null;
                continue;
            }
            Matcher r = ROW_START.matcher(line);
            if (r.find()) {
                row = new ArrayList<>();
                table.put(r.group(1), row);
            } else if (!line.startsWith(" ")) {
                row = null; // header, rule or blank: not part of a row
            }
            if (row != null) {
                Matcher a = ATTR.matcher(line);
                while (a.find()) {
                    row.add(a.group(1));
                }
            }
        }
        return tables;
    }

    /** IBV_QP_* values, by name without the prefix, printed by a C program built against verbs.h. */
    private static Map<String, Integer> ibvMaskValues(Path dir) throws Exception {
        StringBuilder c = new StringBuilder("#include <stdio.h>\n#include <infiniband/verbs.h>\nint main(void) {\n");
        for (String name : maskFields().keySet()) {
            c.append("    printf(\"").append(name).append(" %d\\n\", (int) IBV_QP_").append(name).append(");\n");
        }
        c.append("    return 0;\n}\n");
        Path src = dir.resolve("masks.c");
        Path exe = dir.resolve("masks");
        Files.writeString(src, c);
        run(dir, "gcc (package gcc) and <infiniband/verbs.h> (package libibverbs-dev) are needed",
            "gcc", "-o", exe.toString(), src.toString());
        Map<String, Integer> out = new HashMap<>();
        for (String line : run(dir, "mask probe failed", exe.toString()).split("\n")) {
            String[] kv = line.trim().split(" ");
            out.put(kv[0], Integer.parseInt(kv[1]));
        }
        return out;
    }

    private static Map<String, Integer> maskFields() throws IllegalAccessException {
        Map<String, Integer> out = new LinkedHashMap<>();
        for (Field f : QpAttrMask.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == int.class) {
                out.put(f.getName(), f.getInt(null));
            }
        }
        assertTrue(out.size() >= 22, "QpAttrMask fields: " + out.keySet());
        return out;
    }

    private static String run(Path dir, String needs, String... cmd) throws Exception {
        Process p;
        try {
            p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        } catch (IOException e) {
            fail(needs + ": cannot run " + cmd[0] + ": " + e.getMessage());
            return null;
        }
        byte[] output = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail(String.join(" ", cmd) + " timed out");
        }
        String text = new String(output, StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            fail(needs + "; " + String.join(" ", cmd) + " exited " + p.exitValue() + ":\n" + text);
        }
        return text;
    }
}
