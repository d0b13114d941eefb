package io.jhca.connectx;

import io.jhca.mlx5.init.RoceGids;

import java.net.InetAddress;
import java.util.List;
import java.util.Map;

import io.jhca.mlx5.spi.Mlx5Function;
import io.jhca.mlx5.spi.Mlx5FunctionSource;

/**
 * The simulated ConnectX functions, found by the mlx5 provider through {@link java.util.ServiceLoader}: names and port
 * addresses from {@value ModelConfig#DEVICES_PROPERTY} / {@value ModelConfig#DEVICES_ENV} (default
 * {@value ModelConfig#DEFAULT_DEVICES}, {@code none} for no devices). Listing starts nothing; each {@link #open} powers
 * on a fresh function with its own firmware thread and wire.
 */
public final class ModelFunctionSource implements Mlx5FunctionSource {

    @Override
    public List<String> names() {
        return ModelConfig.names();
    }

    /** The GUID the driver will learn at bring-up: the EUI-64 of the MAC the port's address stands for. */
    @Override
    public long nodeGuid(String name) {
        InetAddress address = ModelConfig.devices().get(name);
        return address == null ? 0 : RoceGids.of(List.of(address)).nodeGuid();
    }

    @Override
    public Mlx5Function open(String name) {
        Map<String, InetAddress> devices = ModelConfig.devices();
        InetAddress address = devices.get(name);
        if (address == null) {
            throw new IllegalArgumentException("no simulated mlx5 function named '" + name + "' (configured: "
                    + devices.keySet() + ")");
        }
        ModelFunction f = ModelFunction.open(name, address);
        // MSI-X vector 0 as a ConnectX behind vfio has it, unless switched off: polled, the driver's event thread
        // looks at the EQ every millisecond, and a CQ event (a completion channel's wake-up) waits for that look
        return "false".equalsIgnoreCase(System.getProperty(ModelFunction.INTERRUPTS_PROPERTY, "true")) ? f
                : f.withInterrupts();
    }
}
