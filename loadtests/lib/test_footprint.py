import unittest

from footprint import client_group, figures, kind


def node(port, role, clients, kinds=None, stream=None, commands=None):
    return {"port": port, "role": role, "clients": [{"name": n, "addr": "", "cmd": ""} for n in clients],
            "used_memory": 0, "used_memory_dataset": 10_000, "keys": sum(k["keys"] for k in (kinds or {}).values()),
            "kinds": kinds or {}, "stream": stream or {}, "commands": commands or {}}


class FootprintTest(unittest.TestCase):
    def test_keys_are_classified_by_the_tier_layout(self):
        self.assertEqual(kind("concert-cache:v1:concert:g17:c1:{concert:42}"), "value:concert")
        self.assertEqual(kind("concert-cache:v1:concert-list:lock:g3:p1:{concert-list:2}"), "lock")
        self.assertEqual(kind("concert-cache:v1:schedules:generation"), "generation")
        self.assertEqual(kind("{concert-cache:v1:schedules:generation}:failover"), "failover-epoch")
        self.assertEqual(kind("concert-cache:v1:concert:shapes"), "shapes")
        self.assertEqual(kind("concert-cache:invalidations"), "stream")
        self.assertEqual(kind("{concert-cache:invalidations}:seq"), "stream-seq")
        self.assertEqual(kind("{concert-cache:capture}:leader"), "capture")
        self.assertEqual(kind("{concert-cache:invalidations}:feed"), "capture")

    def test_client_names_group_without_the_instance_id(self):
        self.assertEqual(client_group("tiered-cache-invalidations-3f2a9c1e-77aa"), "tiered-cache-invalidations-<instance>")

    def test_figures_are_per_instance_per_entry_and_per_write(self):
        data = {
            "instances": 2, "seconds": 10.0, "writes": 20,
            "nodes": [
                node(7000, "master", ["concert-cache"] * 6 + ["tiered-cache-invalidations-abcdef12"] * 2,
                     {"value:concert": {"keys": 100, "sampled": 10, "bytes": 4_000},
                      "value:concert-list": {"keys": 10, "sampled": 10, "bytes": 30_000},
                      "stream": {"keys": 1, "sampled": 1, "bytes": 11_600}},
                     {"entries_added": 80, "length": 100, "memory_bytes": 11_600, "payload_bytes_per_entry": 99.0},
                     {"xread": 120, "xadd": 80}),
                node(7001, "slave", ["concert-cache"] * 2),
            ],
        }
        f = figures(data)
        self.assertEqual(f["connections_per_node"], {7000: 8, 7001: 2})
        # 100 concerts of 400 bytes and 10 pages of 3,000 bytes: 7,000 bytes over 110 entries.
        self.assertAlmostEqual(f["bytes_per_value"], 70_000 / 110)
        self.assertEqual(f["entries_per_write"], 4.0)
        self.assertEqual(f["stream_bytes_per_entry"], 116.0)
        self.assertEqual(f["xreads_per_instance_per_second"], 6.0)


if __name__ == "__main__":
    unittest.main()
