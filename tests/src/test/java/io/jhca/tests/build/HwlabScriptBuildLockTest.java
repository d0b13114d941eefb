package io.jhca.tests.build;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code hwlab} script builds one at a time: two started together on a tree newer than its last build (the two
 * sides of a two-process run after a change) must not run two {@code mvn clean install} over it at once, which
 * delete each other's classes. Run on a copy of the script in a scratch tree (the real tree is the one this suite's
 * build is using), with stand-ins for {@code mvn} (it logs when a build starts and ends, takes a second, and writes
 * what the script checks for) and {@code java} (it says it ran) first on the PATH: one build, never two at a time,
 * and both sides run.
 */
@Timeout(60)
class HwlabScriptBuildLockTest {

    @Test
    void twoHwlabsStartedTogetherBuildOnceAndBothRun(@TempDir Path dir) throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/flock")) || Files.isExecutable(Path.of("/bin/flock")),
                "flock (util-linux) is not installed");
        Path tree = dir.resolve("tree");
        Path bin = dir.resolve("bin");
        Files.createDirectories(tree.resolve("hw-lab/src/main/java"));
        Files.createDirectories(bin);
        Files.copy(Path.of("..", "hwlab"), tree.resolve("hwlab"));
        executable(tree.resolve("hwlab"));
        Files.writeString(tree.resolve("pom.xml"), "<project><artifactId>jhca</artifactId><version>9.9</version>"
                + "<properties><jhca.jvm.opens>-Dx=1</jhca.jvm.opens></properties></project>\n");
        Path log = dir.resolve("builds.log");
        script(bin.resolve("mvn"), "#!/usr/bin/env bash\n"
                + "case \"$*\" in\n"
                + "  *'clean install'*)\n"
                + "    echo \"start $$\" >> '" + log + "'\n"
                + "    rm -rf hw-lab/target; sleep 1; mkdir -p hw-lab/target; touch hw-lab/target/jhca-hw-lab-9.9.jar\n"
                + "    echo \"end $$\" >> '" + log + "' ;;\n"
                + "  *build-classpath*)\n"
                + "    for a in \"$@\"; do case \"$a\" in -Dmdep.outputFile=*) echo /cp > \"${a#*=}\" ;; esac; done ;;\n"
                + "esac\n");
        script(bin.resolve("java"), "#!/usr/bin/env bash\necho \"ran ${@: -1}\"\n");
        // the tree is newer than any build (no class path file yet): stale for both
        Path source = tree.resolve("hw-lab/src/main/java/A.java");
        Files.writeString(source, "class A {}\n");
        Files.setLastModifiedTime(source, FileTime.fromMillis(System.currentTimeMillis()));

        List<Process> sides = new ArrayList<>();
        for (String side : new String[] {"server", "client"}) {
            ProcessBuilder pb = new ProcessBuilder("bash", tree.resolve("hwlab").toString(), side)
                    .redirectErrorStream(true).redirectOutput(dir.resolve(side + ".out").toFile());
            pb.environment().put("PATH", bin + ":" + System.getenv("PATH"));
            sides.add(pb.start());
        }
        for (Process p : sides) {
            assertTrue(p.waitFor(45, TimeUnit.SECONDS), "a side did not finish");
        }
        String builds = Files.readString(log);
        String[] lines = builds.strip().split("\n");
        assertEquals(2, lines.length, "one build, started and ended, not one per side:\n" + builds);
        assertTrue(lines[0].startsWith("start ") && lines[1].startsWith("end "), builds);
        for (String side : new String[] {"server", "client"}) {
            String out = Files.readString(dir.resolve(side + ".out"), StandardCharsets.UTF_8);
            assertTrue(out.contains("ran " + side), side + " ran:\n" + out);
        }
        assertEquals(0, sides.get(0).exitValue());
        assertEquals(0, sides.get(1).exitValue());
    }

    private static void script(Path p, String text) throws IOException {
        Files.writeString(p, text);
        executable(p);
    }

    private static void executable(Path p) throws IOException {
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
}
