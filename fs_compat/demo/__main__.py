from fs_compat.demo import main

raise SystemExit(main())
