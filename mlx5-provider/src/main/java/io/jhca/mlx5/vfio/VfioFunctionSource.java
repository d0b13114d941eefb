package io.jhca.mlx5.vfio;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import io.jhca.mlx5.spi.Mlx5Function;
import io.jhca.mlx5.spi.Mlx5FunctionSource;
import io.jhca.pci.PciAddress;
import io.jhca.pci.PciBinder;
import io.jhca.pci.PciException;
import io.jhca.pci.PciFunction;
import io.jhca.pci.PciSysfs;

/**
 * The ConnectX functions bound to vfio-pci, found by the mlx5 provider through {@link java.util.ServiceLoader}: every
 * PCI function whose vendor is 0x15b3 and whose device ID is a ConnectX-4-or-later PF or VF ({@link ConnectXIds}),
 * plus, in the test mode, the one vendor:device {@link VfioSettings} names. Listing reads sysfs only.
 *
 * <p>Names: {@value #PREFIX} followed by the PCI address, e.g. {@code mlx5_0000:03:00.0}. The kernel's mlx5_0, mlx5_1
 * are numbered in probe order and change when functions are bound or unbound; the PCI address is what the user
 * binds with {@code hwlab pci bind}, stays the same across reboots on the same slot, and cannot collide with the
 * model's or the kernel's numbered names. {@code -d} takes the name as listed.
 *
 * <p>Node GUID: a function bound to vfio-pci has no infiniband class directory to read it from, so it is 0 until the
 * function has been brought up once (the provider then lists the GUID the firmware reported).
 */
public final class VfioFunctionSource implements Mlx5FunctionSource {

    /** Prefix of every name this source gives. */
    public static final String PREFIX = "mlx5_";

    private final Supplier<PciSysfs> sysfs;
    private final Supplier<VfioSettings> settings;

    /** The machine's sysfs and the settings of the system properties / environment, read at each call. */
    public VfioFunctionSource() {
        this(PciSysfs::system, VfioSettings::fromEnvironment);
    }

    /** For tests: a fixture sysfs tree and given settings. */
    public VfioFunctionSource(Supplier<PciSysfs> sysfs, Supplier<VfioSettings> settings) {
        this.sysfs = sysfs;
        this.settings = settings;
    }

    /** The name of the function at {@code address}. */
    public static String nameOf(PciAddress address) {
        return PREFIX + address;
    }

    /**
     * The functions present. A sysfs that cannot be read (a container's partial /sys) lists none, with a warning:
     * the provider's other sources (the model) must still list theirs.
     */
    @Override
    public List<String> names() {
        VfioSettings s = settings.get();
        List<PciFunction> functions;
        try {
            functions = sysfs.get().list();
        } catch (PciException e) {
            System.err.println("jhca mlx5 vfio: cannot list PCI functions, none listed: " + e.getMessage());
            return List.of();
        }
        List<String> out = new ArrayList<>();
        for (PciFunction f : functions) {
            if (f.boundTo(PciBinder.VFIO_PCI) && s.accepts(f.vendor(), f.device())) {
                out.add(nameOf(f.address()));
            }
        }
        return out;
    }

    @Override
    public Mlx5Function open(String name) {
        PciSysfs sys = sysfs.get();
        VfioSettings s = settings.get();
        PciFunction f = function(sys, s, name);
        boolean test = s.testFunction(f.vendor(), f.device());
        return VfioFunction.open(name, f, sys, test ? s.testBar() : 0, test && s.testPhysicalIova(),
                s.addressesOf(f.address()));
    }

    /**
     * The PCI function {@code name} stands for, checked: it exists, is bound to vfio-pci and is a ConnectX (or the
     * test mode's device).
     */
    static PciFunction function(PciSysfs sys, VfioSettings s, String name) {
        if (name == null || !name.startsWith(PREFIX)) {
            throw new IllegalArgumentException("'" + name + "' is not a vfio mlx5 function name (" + PREFIX
                    + "DDDD:BB:DD.F, e.g. mlx5_0000:03:00.0)");
        }
        PciAddress address;
        try {
            address = PciAddress.parse(name.substring(PREFIX.length()));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("'" + name + "' is not a vfio mlx5 function name: " + e.getMessage(), e);
        }
        PciFunction f = sys.function(address);
        if (!s.accepts(f.vendor(), f.device())) {
            throw new IllegalArgumentException(String.format("%s is %04x:%04x, not a ConnectX-4 or later function "
                    + "(vendor 15b3)%s", address, f.vendor(), f.device(), s.testMode() ? "" : "; a device model behind "
                    + "another ID needs " + VfioSettings.TEST_PROPERTY));
        }
        if (!f.boundTo(PciBinder.VFIO_PCI)) {
            throw new IllegalStateException(address + " is bound to " + (f.driver() == null ? "no driver" : f.driver())
                    + ", not vfio-pci: hwlab pci bind " + address);
        }
        return f;
    }
}
