package io.jhca.mlx5.testdev;

import java.net.InetAddress;
import java.util.List;

import io.jhca.mlx5.spi.Mlx5Function;
import io.jhca.mlx5.spi.Mlx5FunctionSource;

/** Lists one scripted function, "scripted_0", for the provider's discovery test (META-INF/services in test resources). */
public final class ScriptedSource implements Mlx5FunctionSource {

    public static final String NAME = "scripted_0";

    @Override
    public List<String> names() {
        return List.of(NAME);
    }

    @Override
    public Mlx5Function open(String name) {
        if (!NAME.equals(name)) {
            throw new IllegalArgumentException(name);
        }
        return ScriptedFirmware.started(name, List.of(InetAddress.getLoopbackAddress()));
    }
}
