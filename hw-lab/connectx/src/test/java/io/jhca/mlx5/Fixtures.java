package io.jhca.mlx5;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

import io.jhca.mlx5.init.Mlx5Options;
import io.jhca.mlx5.testdev.ScriptedFirmware;
import io.jhca.verbs.DeviceInfo;

/** Opening scripted devices with short timeouts. */
final class Fixtures {

    static final Mlx5Options OPTIONS = Mlx5Options.defaults().withInitTimeouts(5_000, 5_000).withCommandTimeout(5_000);

    private Fixtures() {
    }

    static InetAddress ip(String s) {
        try {
            return InetAddress.getByName(s);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(s, e);
        }
    }

    static ScriptedFirmware firmware() {
        return new ScriptedFirmware("mlx5_test", List.of(ip("127.0.0.3")));
    }

    static Mlx5Context open(ScriptedFirmware fw) {
        return open(fw, OPTIONS);
    }

    static Mlx5Context open(ScriptedFirmware fw, Mlx5Options options) {
        return Mlx5Provider.open(new DeviceInfo(fw.name(), "mlx5", 0, "InfiniBand"), fw, options);
    }
}
