from django.apps import AppConfig


class SimulationConfig(AppConfig):
    """The tools that drive the whole platform: `simulate_study` runs simulated
    participants through the real protocol and adds the criterion and
    validation studies' simulated data; `seed_demo` sets up the demo study.
    They sit above every app they drive (STYLE.md), so no app imports them."""

    name = "simulation"
    verbose_name = "Simulation and demo"
