from fairness_core.cli import main

raise SystemExit(main())
