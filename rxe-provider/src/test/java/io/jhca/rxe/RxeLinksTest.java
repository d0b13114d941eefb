package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The link file {@code hwlab link add/delete} keeps, on the loopback interface every network namespace has: what is
 * written, and each refusal with what it tells the user to do.
 */
class RxeLinksTest {

    /** Devices of the property or environment: one on an address of lo, one on an address lo does not have. */
    private static List<RxeDeviceConfig> configured(final String spec) {
        return RxeDeviceConfig.parse(spec).stream().map(RxeDeviceConfig.Builder::build).toList();
    }

    @Test
    void addWritesALineDeleteRemovesIt(@TempDir final Path dir) throws Exception {
        final RxeLinks links = new RxeLinks(dir.resolve("sub").resolve("rxe-links"));
        assertEquals(List.of(), links.read(), "no file: no devices");
        links.add("rxe7", "lo", configured("rxe0=192.0.2.1"));
        assertEquals(List.of(new RxeLinks.Link("rxe7", "lo")), links.read());
        assertTrue(Files.readString(links.file()).contains("\nrxe7 netdev lo\n"), Files.readString(links.file()));
        assertEquals(new RxeLinks.Link("rxe7", "lo"), links.delete("rxe7", List.of()));
        assertEquals(List.of(), links.read());
    }

    @Test
    void refusalsSayWhatToDo(@TempDir final Path dir) throws Exception {
        final RxeLinks links = new RxeLinks(dir.resolve("rxe-links"));
        final List<RxeDeviceConfig> none = configured("rxe0=192.0.2.1");
        final IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
                () -> links.add("rxe7", "no-such-if0", none));
        assertTrue(unknown.getMessage().contains("no network interface named 'no-such-if0'")
                && unknown.getMessage().contains("lo"), unknown.getMessage());
        final IllegalArgumentException taken = assertThrows(IllegalArgumentException.class,
                () -> links.add("rxe0", "lo", none));
        assertTrue(taken.getMessage().contains("taken") && taken.getMessage().contains("e.g. rxe1"), taken.getMessage());
        final IllegalArgumentException sameAddress = assertThrows(IllegalArgumentException.class,
                () -> links.add("rxe7", "lo", configured("rxe0=127.0.0.1")));
        assertTrue(sameAddress.getMessage().contains("127.0.0.1 of lo is already rxe device rxe0's"),
                sameAddress.getMessage());
        assertThrows(IllegalArgumentException.class, () -> links.add("bad name", "lo", none));
        links.add("rxe7", "lo", none);
        final IllegalArgumentException twice = assertThrows(IllegalArgumentException.class,
                () -> links.add("rxe8", "lo", none));
        assertTrue(twice.getMessage().contains("already has rxe device rxe7")
                && twice.getMessage().contains("hwlab link delete rxe7"), twice.getMessage());
        final IllegalArgumentException again = assertThrows(IllegalArgumentException.class,
                () -> links.add("rxe7", "lo", none));
        assertTrue(again.getMessage().contains("already exists"), again.getMessage());
        final IllegalArgumentException fromProperty = assertThrows(IllegalArgumentException.class,
                () -> links.delete("rxe0", none));
        assertTrue(fromProperty.getMessage().contains("change that setting"), fromProperty.getMessage());
        final IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> links.delete("rxe9", none));
        assertTrue(missing.getMessage().contains("it has rxe7"), missing.getMessage());
    }

    @Test
    void aMalformedLineIsNamed(@TempDir final Path dir) throws Exception {
        final Path f = dir.resolve("rxe-links");
        Files.writeString(f, "# comment\nrxe7 netdev lo   # trailing comment\nrxe8 lo\n");
        final IllegalStateException e = assertThrows(IllegalStateException.class, () -> new RxeLinks(f).read());
        assertTrue(e.getMessage().contains("line 3") && e.getMessage().contains("NAME netdev IFACE"), e.getMessage());
        Files.writeString(f, "# comment\nrxe7 netdev lo   # trailing comment\n");
        assertEquals(List.of(new RxeLinks.Link("rxe7", "lo")), new RxeLinks(f).read());
    }

    @Test
    void fileDevicesComeAfterConfiguredOnesWhichWin(@TempDir final Path dir) throws Exception {
        final Path f = dir.resolve("rxe-links");
        Files.writeString(f, "rxe0 netdev lo\nrxe7 netdev lo\nrxe8 netdev no-such-if0\n");
        final String oldLinks = System.getProperty(RxeLinks.FILE_PROPERTY);
        final String oldDevices = System.getProperty(RxeDeviceConfig.DEVICES_PROPERTY);
        try {
            System.setProperty(RxeLinks.FILE_PROPERTY, f.toString());
            System.setProperty(RxeDeviceConfig.DEVICES_PROPERTY, "rxe0=192.0.2.1");
            final List<RxeDeviceConfig> all = RxeDeviceConfig.fromEnvironment();
            assertEquals(List.of("rxe0", "rxe7"), all.stream().map(RxeDeviceConfig::name).toList(),
                    "rxe0 of the property wins, rxe8's missing interface leaves it out");
            assertEquals(null, all.get(0).netdev());
            assertEquals("lo", all.get(1).netdev());
        } finally {
            restore(RxeLinks.FILE_PROPERTY, oldLinks);
            restore(RxeDeviceConfig.DEVICES_PROPERTY, oldDevices);
        }
    }

    private static void restore(final String key, final String value) {
        if (value == null) {
            System.clearProperty(key);
        } else {
            System.setProperty(key, value);
        }
    }
}
