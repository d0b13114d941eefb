package io.jhca.pci;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A PCI function's address, domain:bus:device.function ("BDF"), as sysfs and the kernel spell it:
 * {@code 0000:00:03.0} (16-bit domain, 8-bit bus, 5-bit device, 3-bit function, lower-case hex).
 */
public record PciAddress(int domain, int bus, int device, int function) implements Comparable<PciAddress> {

    private static final Pattern BDF = Pattern.compile("(?:([0-9a-fA-F]{1,4}):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\\.([0-7])");

    public PciAddress {
        if (domain < 0 || domain > 0xffff || bus < 0 || bus > 0xff || device < 0 || device > 0x1f
            || function < 0 || function > 7) {
            throw new IllegalArgumentException("not a PCI address: domain " + domain + " bus " + bus + " device "
                + device + " function " + function);
        }
    }

    /** Parses "0000:00:03.0" or "00:03.0" (domain 0, as lspci prints it). */
    public static PciAddress parse(final String text) {
        final Matcher m = BDF.matcher(text.trim());
        if (!m.matches()) {
            throw new IllegalArgumentException("not a PCI address: '" + text + "' (expected DDDD:BB:DD.F, e.g. 0000:00:03.0)");
        }
        final int device = Integer.parseInt(m.group(3), 16);
        if (device > 0x1f) {
            throw new IllegalArgumentException("not a PCI address: '" + text + "' (device number above 0x1f)");
        }
        return new PciAddress(m.group(1) == null ? 0 : Integer.parseInt(m.group(1), 16), Integer.parseInt(m.group(2), 16),
            device, Integer.parseInt(m.group(4)));
    }

    @Override
    public int compareTo(final PciAddress o) {
        return Long.compare(key(), o.key());
    }

    private long key() {
        return ((long) domain << 16) | (bus << 8) | (device << 3) | function;
    }

    @Override
    public String toString() {
        return String.format("%04x:%02x:%02x.%x", domain, bus, device, function);
    }
}
