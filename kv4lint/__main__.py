from kv4lint.cli import main

raise SystemExit(main())
